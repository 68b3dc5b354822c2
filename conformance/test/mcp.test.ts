// The MCP subject: Brain's own scenarios through the catalogue served by an MCP server
// (subjects/mcp-catalogue.ts) that the runtime starts over stdio or reaches over Streamable HTTP,
// each tool placed with an McpPlacement; and MCP subjects that are broken fail clearly, in bounded time.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { join } from "node:path";
import { runConformance, formatTable } from "../src/cli.ts";
import { NOT_FOR_MCP } from "../src/capabilities.ts";
import { appliesTo, loadScenarios } from "../src/scenario.ts";
import { packageRoot } from "../src/subject.ts";

const quiet = () => undefined;

/** Scenarios about outcomes, deadlines, cancellation and connection loss: each must run (not n/a) and pass. */
const MUST_RUN = [
  "outcome-ok", "other-status-is-data", "reserved-status-inside-explicit-ok", "thrown-exception-is-tool_error", "content-beside-output",
  "output-schema-valid", "output-schema-invalid", "malformed-envelope-ok-without-value", "malformed-envelope-error-without-code", "malformed-envelope-timeout-with-value",
  "input-invalid-never-runs", "input-strict-rejects-extras", "input-ordinary-strips-extras", "input-defaults-and-transforms",
  "deadline-timeout", "deadline-first-cause-kept", "async-validation-consumes-deadline", "cancel-open-call",
  "connection-loss-unknown", "reattach-after-host-restart", "runtime-restart-open-call",
  "progress-events-before-result", "emit-after-finish-rejected", "budget-exceeded",
  "approval-approve-dispatches-once", "approval-survives-runtime-restart",
];

test("every scenario that leaves out mcp says why in one line, and none that applies has a reason", () => {
  const scenarios = loadScenarios(join(packageRoot, "scenarios"));
  const notForMcp = scenarios.filter((s) => !appliesTo(s, "mcp")).map((s) => s.name).sort();
  assert.equal(Object.keys(NOT_FOR_MCP).sort(), notForMcp);
  for (const [name, why] of Object.entries(NOT_FOR_MCP)) assert.ok(why.length > 20 && !why.includes("\n"), `${name}: ${why}`);
});

test("the mcp subject (the reference MCP server over stdio) passes every scenario that applies to MCP; the rest are n/a with their reason", async () => {
  const report = await runConformance({ subject: "mcp", log: quiet });
  assert.ok(report.ok, formatTable(report));
  const passed = report.results.filter((r) => r.pass && !r.na).map((r) => r.name);
  const na = report.results.filter((r) => r.na);
  assert.is(passed.length, 29, formatTable(report));
  assert.is(na.length, Object.keys(NOT_FOR_MCP).length, formatTable(report));
  assert.is(passed.length + na.length, report.results.length);
  for (const name of MUST_RUN) assert.ok(passed.includes(name), `${name} ran and passed:\n${formatTable(report)}`);
  for (const r of na) assert.is(r.detail, `n/a for mcp subjects: ${NOT_FOR_MCP[r.name]}`);
});

test("mcp-http: the same server over Streamable HTTP, killed mid-call and restarted by the runner", async () => {
  // The server's death mid-call, the call after it, and a restart while idle (a stateless server serves the next call).
  const only = ["progress-events-before-result", "connection-loss-unknown", "content-beside-output", "reattach-after-host-restart"];
  const report = await runConformance({ subject: "mcp-http", only: "*", exclude: loadScenarios(join(packageRoot, "scenarios")).map((s) => s.name).filter((n) => !only.includes(n)), log: quiet });
  assert.ok(report.ok, formatTable(report));
  assert.equal(report.results.filter((r) => r.pass && !r.na).map((r) => r.name).sort(), [...only].sort(), formatTable(report));
});

test("an MCP server that exits at once fails every scenario with the runtime's refusal and its stderr, at once", async () => {
  const started = Date.now();
  const report = await runConformance({ subject: "mcp:echo 'my server: cannot read config.toml' >&2; exit 3", only: "deadline-*", log: quiet });
  assert.not.ok(report.ok);
  assert.is(report.results.length, 2);
  for (const r of report.results) {
    assert.not.ok(r.pass);
    assert.match(r.detail ?? "", /^the runtime could not list the MCP server's tools: GET \/v1\/mcp-servers\/conformance\/tools → 503 unavailable: MCP server conformance could not be started or reached .*its stderr ended with: my server: cannot read config\.toml/);
  }
  assert.match(formatTable(report), /--- subject output: mcp:echo .* against the memory runtime:\nmy server: cannot read config\.toml/);
  assert.ok(Date.now() - started < 10_000, `bounded: ${Date.now() - started} ms`);
});

test("an MCP server that answers what is not JSON-RPC fails clearly within the connect timeout, not a hang", async () => {
  const started = Date.now();
  const report = await runConformance({ subject: "mcp:while read line; do echo 'hello, I am not JSON-RPC'; done", only: "outcome-ok", connectTimeoutMs: 3000, log: quiet });
  assert.not.ok(report.ok);
  assert.match(report.results[0]!.detail ?? "", /503 unavailable: MCP server conformance did not answer initialize within 3000 ms \(the transport reported: .*not valid JSON/);
  assert.ok(Date.now() - started < 10_000, `bounded: ${Date.now() - started} ms`);
});

test.run();
