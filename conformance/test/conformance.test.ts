import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { runConformance, formatTable } from "../src/cli.ts";
import { repoRoot } from "../src/subject.ts";

const quiet = () => undefined;

test("the Node host subject passes every scenario", async () => {
  const report = await runConformance({ subject: "node", log: quiet });
  assert.ok(report.results.length >= 30, `only ${report.results.length} scenarios ran`);
  assert.ok(report.ok, formatTable(report));
});

test("the Deno host subject (same catalogue, run by Deno) passes every scenario", async () => {
  const report = await runConformance({ subject: "deno", log: quiet });
  assert.ok(report.ok, formatTable(report));
});

const broken = `command:${process.execPath} --conditions=brain-source --import tsx ${join(repoRoot, "conformance/subjects/broken-host.ts")}`;

test("a deliberately broken subject fails exactly the scenarios it breaks", async () => {
  const report = await runConformance({ subject: broken, only: "*", log: quiet });
  const failed = new Set(report.results.filter((r) => !r.pass).map((r) => r.name));
  for (const name of ["outcome-ok", "outcome-error-keeps-fields", "emit-sequences-before-result"]) {
    assert.ok(failed.has(name), `${name} should fail for the broken subject:\n${formatTable(report)}`);
  }
  const detail = (name: string) => report.results.find((r) => r.name === name)!.detail ?? "";
  assert.match(detail("outcome-ok"), "got #"); // the trace shows the replayed second tool.result
  assert.match(detail("outcome-error-keeps-fields"), "error.retryable");
  assert.match(detail("emit-sequences-before-result"), "await emit returned");
  assert.not.ok(report.ok);
});

test("expected failures: listed failures pass the run, stale entries fail it", async () => {
  const only = "outcome-error-keeps-fields";
  const listed = await runConformance({ subject: broken, only, expectedFailures: [only], log: quiet });
  assert.ok(listed.ok, "a listed failure is expected");
  const stale = await runConformance({ subject: "node", only, expectedFailures: [only], log: quiet });
  assert.equal(stale.staleExpectedFailures, [only]);
  assert.not.ok(stale.ok, "a listed scenario that passes is a stale entry and fails the run");
});

test("a subject that never connects fails with a clear message within a bounded time", async () => {
  const started = Date.now();
  const report = await runConformance({ subject: "command:sleep 30", only: "outcome-ok", connectTimeoutMs: 1500, log: quiet });
  assert.not.ok(report.ok);
  assert.match(report.results[0]!.detail ?? "", "never registered");
  assert.ok(Date.now() - started < 10_000, "bounded");
});

test.run();
