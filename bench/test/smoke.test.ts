// Runs the harness at a few iterations and checks the report's shape: every section present with
// finite numbers, ratios beside baselines, and the goals evaluated. No timing assertions.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runBench } from "../src/main.ts";
import { CONFIGS } from "../src/config.ts";

test("the smoke-sized bench reports every section with numbers and evaluated goals", async () => {
  const r = await runBench(CONFIGS.smoke);
  assert.equal(r.sections.map((s) => s.id), ["1", "2", "3", "4", "5", "6"]);
  for (const s of r.sections) {
    assert.ok(s.figures.length > 0, `section ${s.id} has figures`);
    for (const f of s.figures) {
      assert.ok(Number.isFinite(f.value), `${s.id} ${f.name} is a number (${f.value})`);
      if (f.baseline) assert.ok(Number.isFinite(f.baseline.value) && Number.isFinite(f.ratio!), `${f.name} has a numeric baseline and ratio`);
    }
  }
  const goals = r.sections.flatMap((s) => s.figures.filter((f) => f.goal).map((f) => f.goal!.text));
  for (const g of ["p50 ≤ 3× ws echo p50", "≥ 20000 calls/s at 64 sessions", "≥ 10000 calls/s at 64 sessions", "≤ 1/5 of MCP Streamable HTTP p50", "≥ 10× MCP Streamable HTTP calls/s at 64"]) {
    assert.ok(goals.includes(g), `goal evaluated: ${g}`);
  }
  // The component goal is evaluated when the Rust component could be built (rustc present).
  const components = r.sections.find((s) => s.id === "5")!;
  if (components.figures.some((f) => f.name.startsWith("rust"))) assert.ok(goals.includes("warm p50 < 200 µs (Rust, worker hop included)"), "component goal evaluated");
  else assert.ok(components.notes.some((n) => n.includes("not measured")), "section 5 says why Rust is not measured");
  for (const name of ["1", "2", "3"]) assert.ok(r.sections.find((s) => s.id === name)!.figures.some((f) => f.baseline), `section ${name} has baselines`);
});

test.run();
