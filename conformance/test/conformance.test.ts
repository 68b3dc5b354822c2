import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { spawnSync } from "node:child_process";
import { runConformance, formatTable, reportDocument } from "../src/cli.ts";
import { validateSchema } from "@aexhq/brain-runtime";
import { CONFORMANCE_REPORT_SCHEMA } from "@aexhq/brain-protocol";
import { repoRoot } from "../src/subject.ts";
import { loadScenarios, ScenarioFileError } from "../src/scenario.ts";

const quiet = () => undefined;

/**
 * The fault scenario left out of the root npm test: a hanging upgrade waits registerTimeoutMs (10 s)
 * per subject. `brain-conformance` runs it (the full set) by default.
 */
const SLOW = ["fault-upgrade-hangs"];
const FAULTS = ["fault-unavailable-resend", "fault-unavailable-resend-finish", "fault-final-conflict-ends-call", "fault-silent-runtime", "fault-close-4401-stops", "fault-close-4409-stops"];

test("the Node host subject passes every scenario", async () => {
  const report = await runConformance({ subject: "node", exclude: SLOW, log: quiet });
  assert.ok(report.results.length >= 30, `only ${report.results.length} scenarios ran`);
  assert.ok(report.ok, formatTable(report));
  for (const name of FAULTS) assert.ok(report.results.some((r) => r.name === name && r.pass && !r.na), `${name} ran and passed`);
});

test("the Deno host subject (same catalogue, run by Deno) passes every scenario", async () => {
  const report = await runConformance({ subject: "deno", exclude: SLOW, log: quiet });
  assert.ok(report.ok, formatTable(report));
});

test("the HTTP subject (the catalogue behind httpTools) passes every scenario HTTP tools take part in; the rest are n/a", async () => {
  const report = await runConformance({ subject: "http", exclude: SLOW, log: quiet });
  assert.ok(report.ok, formatTable(report));
  const na = report.results.filter((r) => r.na).map((r) => r.name);
  // Events, background work, model calls and the host connection are not granted over HTTP.
  for (const name of ["emit-sequences-before-result", "return-then-background-finish-wakes-loop", "model-call-from-tool", "connection-loss-unknown"]) assert.ok(na.includes(name), `${name} should be n/a: ${formatTable(report)}`);
  assert.ok(report.results.filter((r) => r.pass && !r.na).length >= 30, formatTable(report));
});

const broken = `command:${process.execPath} --conditions=brain-source --import tsx ${join(repoRoot, "conformance/subjects/broken-host.ts")}`;

test("a deliberately broken subject fails exactly the scenarios it breaks", async () => {
  const report = await runConformance({ subject: broken, only: "*", exclude: SLOW, log: quiet });
  const failed = new Set(report.results.filter((r) => !r.pass).map((r) => r.name));
  for (const name of ["outcome-ok", "outcome-error-keeps-fields", "emit-sequences-before-result", "model-call-from-tool", "runtime-restart-between-frames", "digest-edge-cases", ...FAULTS]) {
    assert.ok(failed.has(name), `${name} should fail for the broken subject:\n${formatTable(report)}`);
  }
  const detail = (name: string) => report.results.find((r) => r.name === name)!.detail ?? "";
  assert.match(detail("outcome-ok"), "got #"); // the trace shows the replayed second tool.result
  assert.match(detail("outcome-error-keeps-fields"), "error.retryable");
  assert.match(detail("emit-sequences-before-result"), "await emit returned");
  assert.match(detail("model-call-from-tool"), "expected 1 model.request record(s)");
  // Each fault scenario fails naming the rule the broken host ignores.
  assert.match(detail("fault-unavailable-resend"), /^rule "resend after unavailable" .*emit \(ref \d+\) was answered `unavailable` \(retryable\) and never sent again/);
  assert.match(detail("fault-unavailable-resend-finish"), /^rule "resend after unavailable" .*finish \(ref \d+\) was answered/);
  assert.match(detail("fault-final-conflict-ends-call"), /^rule "final ends the call" .*trace differs/);
  assert.match(detail("fault-silent-runtime"), /^rule "liveness" .*did not connect again within hostTimeoutMs 3000 ms/);
  assert.match(detail("fault-close-4401-stops"), /^rule "stop on 4401" .*connected again/);
  assert.match(detail("fault-close-4409-stops"), /^rule "stop on 4409" .*connected again/);
  // Its return_then_finish finishes on a newer connection than the call's.
  assert.match(detail("runtime-restart-between-frames"), /^rule "nothing for a call of a lost connection" .*the subject sent finish for call \S+ on its connection #\d+, but the call was invoked on connection #\d+/);
  // Its digest_edges is digested with keys in code-point order: refused, and the failure says so.
  assert.match(detail("digest-edge-cases"), /does not implement tool digest_edges .*the runtime answered the subject: digest_mismatch: tool digest_edges/);
  // Capabilities: it lacks `throw` (core, required) and `environments` (optional).
  assert.match(detail("thrown-exception-is-tool_error"), 'the subject does not implement tool throw of the required capability "core"');
  const envs = report.results.find((r) => r.name === "environments-within-authority")!;
  assert.ok(envs.na, formatTable(report));
  assert.is(envs.detail, 'n/a: needs environments (capability "environments"), which the subject does not implement');
  // Its `versioned` would run any digest, but the runtime refuses to send it the old contract.
  assert.ok(!failed.has("reattach-refused-on-schema-mismatch"), detail("reattach-refused-on-schema-mismatch"));
  assert.not.ok(report.ok);
  // What the broken host itself printed follows the table.
  assert.match(formatTable(report), /--- subject output: command:.*broken-host\.ts against the memory runtime:\n/);
});

test("expected failures: listed failures pass the run, stale entries fail it", async () => {
  const only = "outcome-error-keeps-fields";
  const listed = await runConformance({ subject: broken, only, expectedFailures: [only], log: quiet });
  assert.ok(listed.ok, "a listed failure is expected");
  const stale = await runConformance({ subject: "node", only, expectedFailures: [only], log: quiet });
  assert.equal(stale.staleExpectedFailures, [only]);
  assert.not.ok(stale.ok, "a listed scenario that passes is a stale entry and fails the run");
});

test("a subject that never connects fails with a clear message within a bounded time, and the terminal report shows its own output", async () => {
  const started = Date.now();
  const report = await runConformance({ subject: "command:echo 'my host: cannot read config.toml' >&2; echo 'starting'; sleep 30", only: "outcome-ok", connectTimeoutMs: 1500, log: quiet });
  assert.not.ok(report.ok);
  const detail = report.results[0]!.detail ?? "";
  assert.match(detail, /^the subject never registered as host conformance-\w+ within 1500 ms: no register frame with this host id reached the runtime/);
  assert.match(detail, "my host: cannot read config.toml");
  assert.ok(Date.now() - started < 10_000, "bounded");
  // The table a terminal shows: the reason on the scenario's line, the subject's output after it.
  const table = formatTable(report);
  assert.match(table, /outcome-ok\s+FAIL\s+the subject never registered/);
  assert.match(table, /--- subject output: command:.* against the memory runtime:\n(starting\nmy host: cannot read config.toml|my host: cannot read config.toml\nstarting)/);
  // The --report document stays within its schema: the output is in the failure's detail only.
  assert.not.ok("subjectOutput" in (reportDocument(report) as object));
});

test("brain-conformance --help prints real help and exits 0; an unknown option or a missing --subject exits 2 naming it", () => {
  const cli = (...args: string[]) => spawnSync(process.execPath, ["--conditions=brain-source", "--import", "tsx", join(repoRoot, "conformance/src/cli.ts"), ...args], { encoding: "utf8" });
  const help = cli("--help");
  assert.is(help.status, 0, help.stderr);
  assert.match(help.stdout, /^usage: brain-conformance --subject <subject> \[options\]/);
  for (const flag of ["--subject", "--only", "--report", "--expected-failures", "--scenarios", "--connect-timeout", "--scenario-timeout", "--max-emitted-bytes"]) assert.match(help.stdout, `  ${flag} `);
  assert.match(help.stdout, "contract/PROTOCOL.md");
  const unknown = cli("--subject", "node", "--onyl", "outcome-ok");
  assert.is(unknown.status, 2);
  assert.match(unknown.stderr, "brain-conformance: unknown option --onyl (brain-conformance --help lists the options)");
  const none = cli("--only", "outcome-ok");
  assert.is(none.status, 2);
  assert.match(none.stderr, "--subject is required");
});

/** A copy of a real scenario with one field broken, in a temp folder of its own. */
function badScenarioDir(edit: (s: Record<string, any>) => void): string {
  const dir = mkdtempSync(join(tmpdir(), "brain-bad-scenario-"));
  const s = JSON.parse(readFileSync(join(repoRoot, "conformance/scenarios/outcome-ok.json"), "utf8"));
  edit(s);
  writeFileSync(join(dir, "outcome-ok.json"), JSON.stringify(s));
  return dir;
}

test("brain-conformance --list prints the capabilities, required and optional, and what each scenario needs", () => {
  const r = spawnSync(process.execPath, ["--conditions=brain-source", "--import", "tsx", join(repoRoot, "conformance/src/cli.ts"), "--list"], { encoding: "utf8" });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /^capabilities \(CATALOGUE\.md\):\n  core +required /);
  assert.match(r.stdout, /\n  model +optional /);
  assert.match(r.stdout, /\n  model-call-from-tool +model \(optional\); tools ask_model; subjects /);
  assert.match(r.stdout, /\n  fault-silent-runtime +core \(required\); tools sleep; subjects host\n/);
});

test("a malformed scenario file is refused with the file and the path of the problem", () => {
  const dir = badScenarioDir((s) => { s.expect.calls[0].status = "done"; });
  try {
    let error: unknown;
    try { loadScenarios(dir); } catch (e) { error = e; }
    assert.instance(error, ScenarioFileError);
    const e = error as ScenarioFileError;
    assert.is(e.file, join(dir, "outcome-ok.json"));
    assert.is(e.path, "/expect/calls/0/status");
    assert.match(e.message, `${join(dir, "outcome-ok.json")}: /expect/calls/0/status`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("rules the schema cannot say are checked too: restart_runtime needs a sqlite journal", () => {
  const dir = badScenarioDir((s) => { s.actions = [{ when: "tool.call_started", do: "restart_runtime" }]; });
  try {
    assert.throws(() => loadScenarios(dir), (e: Error) => e instanceof ScenarioFileError && e.path === "/actions/0/do" && /sqlite/.test(e.message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the CLI exits 2 on a malformed scenario file, naming the file and the path", () => {
  const dir = badScenarioDir((s) => { s.actions = [{ when: "tool.call_started", do: "explode" }]; });
  try {
    const r = spawnSync(process.execPath, ["--conditions=brain-source", "--import", "tsx", join(repoRoot, "conformance/src/cli.ts"), "--subject", "node", "--scenarios", dir], { encoding: "utf8" });
    assert.is(r.status, 2, r.stderr);
    assert.match(r.stderr, join(dir, "outcome-ok.json"));
    assert.match(r.stderr, "/actions/0/do");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("--report writes a document that matches contract/conformance-report.schema.json; n/a is pass true with na true", () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-report-"));
  const file = join(dir, "report.json");
  try {
    const r = spawnSync(process.execPath, ["--conditions=brain-source", "--import", "tsx", join(repoRoot, "conformance/src/cli.ts"), "--subject", "http", "--only", "emit-sequences-before-result", "--report", file, "--scenario-timeout", "5000", "--connect-timeout", "20000"], { encoding: "utf8" });
    assert.is(r.status, 0, r.stderr + r.stdout);
    const doc = JSON.parse(readFileSync(file, "utf8"));
    assert.equal(validateSchema(CONFORMANCE_REPORT_SCHEMA, doc), []);
    assert.equal(doc.results, [{ name: "emit-sequences-before-result", pass: true, na: true, detail: "n/a for http subjects", ms: 0 }]);
    assert.is(doc.ok, true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a report that does not match the report schema is refused, and the limits are checked", () => {
  const good = { subject: "node", results: [{ name: "a", pass: false, detail: "x", ms: 3, records: [] }], unexpectedFailures: ["a"], staleExpectedFailures: [], ok: false };
  assert.equal((reportDocument(good as never) as { results: unknown[] }).results, [{ name: "a", pass: false, detail: "x", ms: 3 }]);
  assert.throws(() => reportDocument({ ...good, results: [{ name: "a", pass: "no", ms: 1 }] } as never), /conformance-report\.schema\.json/);
  const r = spawnSync(process.execPath, ["--conditions=brain-source", "--import", "tsx", join(repoRoot, "conformance/src/cli.ts"), "--subject", "node", "--scenario-timeout", "soon"], { encoding: "utf8" });
  assert.is(r.status, 2);
  assert.match(r.stderr, "--scenario-timeout must be a positive integer");
});

test.run();
