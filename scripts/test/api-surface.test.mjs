// The public surface of the published packages is recorded in api/*.api.md (scripts/api-surface.mjs):
// a change to what users can import must show up there as a diff, and every export must carry the
// TSDoc comment the API reference (npm run docs:api) is made from.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGES, root, surfaces } from "../api-surface.mjs";

const current = surfaces();

test("api/*.api.md match the sources: run `npm run api:update` and commit the diff when the public surface changes", () => {
  for (const s of current) {
    const path = join(root, s.report);
    assert.ok(existsSync(path), `${s.report} is missing: run npm run api:update`);
    const committed = readFileSync(path, "utf8");
    if (committed === s.text) continue;
    // The first line that differs, so the failure says what changed.
    const a = committed.split("\n");
    const b = s.text.split("\n");
    const i = b.findIndex((line, n) => line !== a[n]);
    assert.unreachable(`${s.report} is stale (run npm run api:update and commit it); first difference at line ${i + 1}:\n  committed: ${a[i] ?? "(end)"}\n  sources:   ${b[i] ?? "(end)"}`);
  }
});

test("every public export of @aexhq/brain, -core, -runtime and -conformance has a TSDoc comment", () => {
  const missing = current.filter((s) => s.undocumented.length > 0).map((s) => `${s.name}: ${s.undocumented.join(", ")}`);
  assert.equal(missing, [], `exports without a TSDoc comment (the API reference would show them bare):\n${missing.join("\n")}`);
});

test("the report lists the packages' real exports (Brain and tool from the SDK, startBrain from the runtime, runConformance)", () => {
  const text = (name) => current.find((s) => s.name === name).text;
  assert.match(text("@aexhq/brain"), /^export class Brain extends BrainClient \{$/m);
  assert.match(text("@aexhq/brain"), /^export function tool</m);
  assert.match(text("@aexhq/brain-runtime"), /^export function startBrain\(opts\?: BrainOptions\): Promise</m);
  assert.match(text("@aexhq/brain-conformance"), /^export function runConformance\(opts: ConformanceOptions\)/m);
  // Paths of this checkout never leak into the report.
  for (const s of current) assert.not.match(s.text, root, s.report);
  assert.is(PACKAGES.length, 4);
});

test.run();
