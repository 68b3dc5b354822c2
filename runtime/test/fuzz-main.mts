// `npm run fuzz [-- --seed N] [--cases N] [--only I] [--concurrency N]`: the fuzz suite of issue 16
// against a live `brain serve` subprocess (test/helpers/fuzz.ts). Prints the seed first, so any
// run can be replayed; exits 1 when there is any finding.
import { describeCase, generateCases, runFuzz } from "./helpers/fuzz.ts";

const args = process.argv.slice(2);
const flag = (name: string): number | undefined => {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const n = Number(args[i + 1]);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`--${name} takes a non-negative integer, got ${JSON.stringify(args[i + 1])}`);
    process.exit(2);
  }
  return n;
};
const seed = flag("seed") ?? Math.floor(Math.random() * 2 ** 31);
const cases = flag("cases") ?? 10_000;
const only = flag("only");
const concurrency = flag("concurrency");
console.log(`fuzz: seed ${seed}, ${only !== undefined ? `case ${only} only` : `${cases} cases`} (replay: npm run fuzz -- --seed ${seed} --cases ${cases})`);
const report = await runFuzz({ seed, cases, only, concurrency, log: (line) => console.log(line) });
const cased = generateCases(seed, Math.max(0, ...report.findings.map((f) => (f.case ?? -1) + 1)));
for (const f of report.findings.slice(0, 50)) {
  console.log(`finding [${f.kind}]${f.case !== undefined ? ` case ${f.case}` : ""}: ${f.detail}`);
  if (f.case !== undefined) console.log(`  case: ${describeCase(cased[f.case]!)}`);
}
if (report.findings.length > 50) console.log(`… and ${report.findings.length - 50} more findings`);
console.log(`fuzz: outcomes ${JSON.stringify(Object.fromEntries(Object.entries(report.stats).sort()))}`);
console.log(`fuzz: journal of ${report.sessionsChecked} sessions (${report.recordsChecked} records) checked; integrity_check ${report.integrity}`);
console.log(`fuzz: seed ${report.seed}, ${report.cases} cases in ${(report.ms / 1000).toFixed(1)} s, ${report.findings.length} findings`);
process.exit(report.findings.length === 0 ? 0 : 1);
