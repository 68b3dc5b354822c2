// The fuzz suite (issue 16) as part of `npm test`: a few hundred generated cases against a live
// `brain serve` subprocess, judged like `npm run fuzz` judges 10,000 (test/helpers/fuzz.ts).
// BRAIN_FUZZ_SEED / BRAIN_FUZZ_CASES change the seed and the count.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { describeCase, generateCases, runFuzz } from "./helpers/fuzz.ts";

const seed = Number(process.env.BRAIN_FUZZ_SEED ?? 16);
const cases = Number(process.env.BRAIN_FUZZ_CASES ?? 250);

test(`fuzz (seed ${seed}, ${cases} cases): no 5xx, no internal code, no crash or hang; the server still lists, runs a turn, and its journal is gap-free and intact`, async () => {
  const report = await runFuzz({ seed, cases, concurrency: 6 });
  console.log(`  fuzz: seed ${seed}, ${report.cases} cases in ${(report.ms / 1000).toFixed(1)} s, ${report.findings.length} findings; ${report.sessionsChecked} journals checked, integrity_check ${report.integrity}`);
  const all = generateCases(seed, cases);
  const lines = report.findings.slice(0, 10).map((f) => `[${f.kind}]${f.case !== undefined ? ` case ${f.case}: ${describeCase(all[f.case]!)}\n   ` : ""} ${f.detail}`);
  assert.is(report.findings.length, 0, `findings (replay: npm run fuzz -- --seed ${seed} --cases ${cases}):\n${lines.join("\n")}`);
  assert.is(report.integrity, "ok");
  assert.ok(report.sessionsChecked >= 3);
});

test.run();
