import { test } from "uvu";
import * as assert from "uvu/assert";
import { isDeepStrictEqual } from "node:util";
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

test("a component that is not a component is refused at upload and every scenario fails with that reason", async () => {
  const report = await runConformance({ subject: `component:${new URL("../catalogue.json", import.meta.url).pathname}`, only: "outcome-ok", log: quiet });
  assert.not.ok(report.ok);
  assert.match(report.results[0]!.detail ?? "", "was not admitted");
});

test.run();
