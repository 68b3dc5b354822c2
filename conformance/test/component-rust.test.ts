import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readFileSync } from "node:fs";
import { contractDigest, startBrain } from "@aexhq/brain-runtime";
import type { EventsResponse, JournalRecord, Session, ToolFinishedRecord, ToolResultRecord } from "@aexhq/brain-protocol";
import { runConformance, formatTable } from "../src/cli.ts";
import { RuntimeApi } from "../src/http.ts";
import { readCatalogueDocument } from "../src/catalogue-document.ts";
import { componentPlacement, toolOptionsSchema, uploadComponent } from "../src/component-subject.ts";
import { buildRustCatalogueComponent } from "../component-rust/build.ts";
// @ts-ignore: a plain .mjs script without declarations.
import { rustUnavailable, skipNotice } from "../../scripts/rust-toolchain.mjs";

// Every test here runs the Rust-built catalogue: on a machine without rustc they are skipped, and counted.
const rustMissing: string | undefined = rustUnavailable();
if (rustMissing) skipNotice(3, "conformance/test/component-rust.test.ts", rustMissing);
const rustTest = rustMissing ? test.skip : test;

const quiet = () => undefined;
// Scenarios the Rust component is known to fail (none today). Passed as the CLI's
// --expected-failures would be; a listed scenario that passes fails the run, so it stays honest.
const EXPECTED_FAILURES = new URL("../expected-failures/rust-component.json", import.meta.url);
const expectedFailures = existsSync(EXPECTED_FAILURES) ? (JSON.parse(readFileSync(EXPECTED_FAILURES, "utf8")) as string[]) : [];

/**
 * Places catalogue tool `name` on the Rust component by hand (the runner places only tools marked
 * `component: true`), lets the scripted model call it once with `input`, and returns the call's
 * results and its tool.finished record.
 */
async function callOnce(name: string, input: unknown): Promise<{ results: ToolResultRecord[]; finished: ToolFinishedRecord }> {
  const { path } = await buildRustCatalogueComponent();
  const brain = await startBrain({ dataDir: ":memory:", port: 0 });
  try {
    const api = new RuntimeApi(brain.url, brain.token);
    const digest = await uploadComponent(api, path);
    const t = readCatalogueDocument().tools.find((x) => x.name === name)!;
    const schemas = { name: t.name, inputSchema: t.inputSchema, ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}), optionsSchema: toolOptionsSchema(t.name) };
    const contract = { ...schemas, description: t.description, digest: contractDigest(schemas) };
    const session = await api.ok<Session>("POST", "/v1/sessions", {
      model: { provider: "scripted", script: [{ toolCalls: [{ name, input }] }, { text: "done" }] },
      tools: [componentPlacement(contract, digest)],
    });
    await api.ok("POST", `/v1/sessions/${session.id}/messages`, { text: `call ${name}` });
    const records: JournalRecord[] = [];
    const until = Date.now() + 15_000;
    for (;;) {
      const page = await api.ok<EventsResponse>("GET", `/v1/sessions/${session.id}/events?after=${records.at(-1)?.sequence ?? 0}`);
      records.push(...page.records);
      const finished = records.find((r): r is ToolFinishedRecord => r.type === "tool.finished");
      if (finished) return { results: records.filter((r): r is ToolResultRecord => r.type === "tool.result"), finished };
      if (Date.now() > until) throw new Error(`no tool.finished within 15 s: ${JSON.stringify(records)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await brain.close();
  }
}

rustTest("the Rust catalogue component passes every scenario a component can take part in; the rest are n/a", async () => {
  const built = await buildRustCatalogueComponent();
  const report = await runConformance({ subject: `component:${built.path}`, expectedFailures, log: quiet });
  assert.ok(report.ok, formatTable(report));
  const na = report.results.filter((r) => r.na).map((r) => r.name);
  assert.ok(na.includes("connection-loss-unknown"), "connection loss does not apply to a component");
  assert.ok(report.results.filter((r) => r.pass && !r.na).length >= 30, formatTable(report));
});

rustTest("a catalogue tool the Rust component lacks (the host-only throw) ends the call with an error naming it", async () => {
  const { finished } = await callOnce("throw", { message: "boom" });
  assert.is(finished.data.status, "error");
  assert.is(finished.data.error?.code, "not_registered");
  assert.match(finished.data.error?.message ?? "", "no catalogue tool throw");
});

rustTest("the Rust component's JSON reader copies nested values, escapes and non-ASCII text exactly", async () => {
  const value = { s: 'a "quoted" } ] , \\ back\nslash', nested: [{ k: "}{" }, [], {}, -1.5e-7, null, true], u: "é😀\u0001", empty: "" };
  const echo = await callOnce("echo", { value });
  assert.is(echo.finished.data.status, "ok");
  assert.equal(echo.results.map((r) => r.data.outcome), [{ status: "ok", value: { value } }]);
  // The guest decodes `shout` (escapes, a surrogate pair) and upper-cases it as JavaScript would.
  const defaults = await callOnce("defaults", { shout: 'straße "x"\t😀', name: "n\\m", count: -3 });
  assert.equal(defaults.results.map((r) => r.data.outcome), [{ status: "ok", value: { name: "n\\m", count: -3, shout: 'straße "x"\t😀'.toUpperCase() } }]);
  const fail = await callOnce("fail", { details: { why: ["x", { y: 1 }] }, message: "m \"q\"", code: "c", retryable: false });
  assert.equal(fail.finished.data.error, { code: "c", message: 'm "q"', retryable: false, details: { why: ["x", { y: 1 }] } });
});

test.run();
