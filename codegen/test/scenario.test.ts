import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { emitScenario } from "../src/emit-scenario.ts";
import { scenarioIssues } from "@aexhq/brain-protocol";

const root = join(import.meta.dirname, "../..");
const dir = join(root, "conformance/scenarios");
const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();
const first = JSON.parse(readFileSync(join(dir, files[0]!), "utf8"));

test("every committed scenario file matches contract/conformance-scenario.schema.json", () => {
  assert.ok(files.length > 0);
  for (const f of files) assert.equal(scenarioIssues(JSON.parse(readFileSync(join(dir, f), "utf8"))), [], f);
});

test("a malformed scenario gets the path of each problem", () => {
  const { name: _dropped, ...noName } = first;
  assert.equal(scenarioIssues(noName).map((i) => i.path), ["/name"]);
  const extra = scenarioIssues({ ...first, surprise: 1 });
  assert.ok(extra.length > 0);
  const badStatus = structuredClone(first);
  badStatus.expect.calls[0].status = "fine";
  assert.equal(scenarioIssues(badStatus).map((i) => i.path), ["/expect/calls/0/status"]);
  const badStep = structuredClone(first);
  badStep.script = [{ toolCalls: "not a list" }];
  assert.ok(scenarioIssues(badStep).some((i) => i.path.startsWith("/script/0")), JSON.stringify(scenarioIssues(badStep)));
});

test("a scenario def named like a protocol def is refused (both are exported from one package)", () => {
  const scenario = JSON.parse(readFileSync(join(root, "contract/conformance-scenario.schema.json"), "utf8"));
  const protocol = JSON.parse(readFileSync(join(root, "contract/protocol.schema.json"), "utf8"));
  scenario.$defs.Outcome = { type: "string" };
  assert.throws(() => emitScenario(scenario, protocol, ""), /has the name of a protocol def/);
  const dangling = JSON.parse(readFileSync(join(root, "contract/conformance-scenario.schema.json"), "utf8"));
  dangling.$defs.Scenario.properties.script.items = { $ref: `${protocol.$id}#/$defs/NoSuchDef` };
  assert.throws(() => emitScenario(dangling, protocol, ""), /has no def NoSuchDef/);
});

test.run();
