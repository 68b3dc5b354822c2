import { test } from "uvu";
import * as assert from "uvu/assert";
import { isDeepStrictEqual } from "node:util";
import { spawnSync } from "node:child_process";
import { runConformance, formatTable } from "../src/cli.ts";
import { buildCatalogueComponent } from "../src/component-build.ts";
import { buildCatalogueDocument, readCatalogueDocument } from "../src/catalogue-document.ts";
import { componentContracts } from "../src/component-subject.ts";

const quiet = () => undefined;

test("catalogue.json is exactly what the Node catalogue advertises (regenerate with --write)", async () => {
  const fresh = await buildCatalogueDocument();
  const file = readCatalogueDocument();
  for (const t of fresh.tools) {
    const stored = file.tools.find((f) => f.name === t.name);
    assert.ok(stored, `catalogue.json lacks ${t.name}`);
    assert.equal(stored, t, `catalogue.json differs for ${t.name}`);
  }
  assert.equal(file.tools.map((t) => t.name), fresh.tools.map((t) => t.name), "same tools in the same order");
  assert.ok(isDeepStrictEqual(file.variants, fresh.variants), "the variants match");
  assert.ok(isDeepStrictEqual(file.capabilities, fresh.capabilities), "the capabilities match");
  // Every tool belongs to one capability; core is the one a host binding must implement.
  assert.equal(Object.entries(file.capabilities).filter(([, c]) => c.required).map(([n]) => n), ["core"]);
  for (const t of file.tools) assert.ok(file.capabilities[t.capability]?.tools.includes(t.name), `${t.name} is listed under its capability`);
});

test("component contracts take the catalogue schemas and add the options schema naming the tool", () => {
  const contracts = componentContracts();
  assert.not.ok(contracts.has("throw"), "host-only tools are not placed on a component");
  const echo = contracts.get("echo")!;
  assert.equal(echo.inputSchema, readCatalogueDocument().tools.find((t) => t.name === "echo")!.inputSchema);
  assert.equal(echo.optionsSchema, { type: "object", properties: { tool: { const: "echo" } }, required: ["tool"], additionalProperties: false });
  assert.match(echo.digest, /^[0-9a-f]{64}$/);
});

test("the JS catalogue component passes every scenario a component can take part in; the rest are n/a", async () => {
  const { path } = await buildCatalogueComponent();
  const report = await runConformance({ subject: `component:${path}`, log: quiet });
  assert.ok(report.ok, formatTable(report));
  const na = report.results.filter((r) => r.na).map((r) => r.name);
  assert.ok(na.includes("connection-loss-unknown"), "connection loss does not apply to a component");
  assert.ok(report.results.filter((r) => r.pass && !r.na).length >= 30, formatTable(report));
  assert.match(formatTable(report), /connection-loss-unknown\s+n\/a/);
});

test("a component implementing one tool (--tools echo): the scenarios of its tool pass, every other is n/a naming the tool it lacks", async () => {
  const { path } = await buildCatalogueComponent();
  const report = await runConformance({ subject: `component:${path}`, tools: ["echo"], log: quiet });
  assert.ok(report.ok, formatTable(report));
  const ok = report.results.find((r) => r.name === "outcome-ok")!;
  assert.ok(ok.pass && !ok.na, formatTable(report));
  const other = report.results.find((r) => r.name === "outcome-error-keeps-fields")!;
  assert.ok(other.na, formatTable(report));
  // For a component every capability is optional: a core tool it lacks makes the scenario n/a, not failed.
  assert.is(other.detail, 'n/a: needs fail (capability "core"), which the subject does not implement');
});

test("a component file that is missing is a usage error before any scenario (the CLI exits 2 naming it)", async () => {
  let error: unknown;
  try { await runConformance({ subject: "component:/nonexistent/tools.wasm", log: quiet }); } catch (e) { error = e; }
  assert.match((error as Error)?.message ?? "", "the component file /nonexistent/tools.wasm cannot be read (ENOENT)");
  const cli = spawnSync(process.execPath, ["--conditions=brain-source", "--import", "tsx", new URL("../src/cli.ts", import.meta.url).pathname, "--subject", "component:/nonexistent/tools.wasm"], { encoding: "utf8" });
  assert.is(cli.status, 2, cli.stderr);
  assert.match(cli.stderr, "cannot be read (ENOENT)");
  assert.is(cli.stdout, "", "no scenario ran");
});

test("a component that is not a component is refused at upload and every scenario fails with that reason", async () => {
  const report = await runConformance({ subject: `component:${new URL("../catalogue.json", import.meta.url).pathname}`, only: "outcome-ok", log: quiet });
  assert.not.ok(report.ok);
  assert.match(report.results[0]!.detail ?? "", "was not admitted");
});

test.run();
