// `npm run verify [-- --seed N] [--seconds N | --minutes N] [--nodes N] [--faults kill,pause,drop-host,db-restart]`:
// the verification runner of issue 32 (verify/run.ts) against real `brain serve` subprocesses.
// Prints the seed first and a replay command at the end; exits 1 when any promise was broken.
import { FAULT_KINDS, verify } from "./verify/run.ts";
import type { FaultKind } from "./verify/run.ts";

const args = process.argv.slice(2);
const usage = "usage: npm run verify -- [--seed N] [--seconds N | --minutes N] [--nodes N] [--faults kill,pause,drop-host,db-restart]";
const value = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? undefined : args[i + 1];
};
const known = new Set(["--seed", "--seconds", "--minutes", "--nodes", "--faults"]);
for (let i = 0; i < args.length; i += 2) {
  if (args[i] === "--help" || args[i] === "-h") {
    console.log(usage);
    process.exit(0);
  }
  if (!known.has(args[i]!) || args[i + 1] === undefined) {
    console.error(`verify: unknown or incomplete argument ${JSON.stringify(args[i])}\n${usage}`);
    process.exit(2);
  }
}
const int = (name: string, fallback: number): number => {
  const raw = value(name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`verify: --${name} takes a non-negative integer, got ${JSON.stringify(raw)}`);
    process.exit(2);
  }
  return n;
};
const seed = int("seed", Math.floor(Math.random() * 2 ** 31));
const seconds = value("minutes") !== undefined ? int("minutes", 1) * 60 : int("seconds", 60);
const nodes = int("nodes", 0);
const faults = value("faults")?.split(",") as FaultKind[] | undefined;
for (const f of faults ?? []) {
  if (!(FAULT_KINDS as readonly string[]).includes(f)) {
    console.error(`verify: unknown fault ${JSON.stringify(f)}; known: ${FAULT_KINDS.join(", ")}`);
    process.exit(2);
  }
}
const report = await verify({ seed, seconds, nodes, faults, log: (line) => console.log(line) });
const { log: _log, violations, ...figures } = report;
console.log(`verify: ${JSON.stringify(figures)}`);
for (const v of violations.slice(0, 30)) console.log(`finding: ${v}`);
if (violations.length > 30) console.log(`… and ${violations.length - 30} more findings`);
if (report.evidenceFile) console.log(`verify: evidence in ${report.evidenceFile}`);
console.log(`verify: seed ${seed}, ${nodes === 0 ? "one SQLite node" : `${nodes} PostgreSQL nodes`}, ${(report.ms / 1000).toFixed(0)} s, ${violations.length} findings${violations.length > 0 ? `; replay: ${report.replay}` : ""}`);
process.exit(violations.length === 0 ? 0 : 1);
