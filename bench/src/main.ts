// npm run bench [-- --quick]: every figure beside a baseline measured in the same run.
import { writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { CONFIGS } from "./config.ts";
import type { BenchConfig } from "./config.ts";
import { hostCalls } from "./host-calls.ts";
import { emitRate } from "./emit.ts";
import { mcpPeers } from "./mcp.ts";
import { memory } from "./memory.ts";
import { componentTools } from "./components.ts";
import { printSection } from "./report.ts";
import type { Report } from "./report.ts";
import { round } from "./stats.ts";

/** The `brain-source` condition resolves the packages to their .ts sources; without it, to dist/. */
function packagesFrom(): "dist" | "source" {
  return import.meta.resolve("@aexhq/brain").endsWith(".ts") ? "source" : "dist";
}

export async function runBench(cfg: BenchConfig, opts: { log?: (s: string) => void; print?: boolean } = {}): Promise<Report> {
  const log = opts.log ?? (() => {});
  const print = opts.print ?? false;
  const t0 = Date.now();
  const report: Report = {
    date: new Date().toISOString(),
    command: `npm run bench${cfg.mode === "quick" ? " -- --quick" : ""}`,
    mode: cfg.mode,
    packages: packagesFrom(),
    machine: { nproc: availableParallelism(), memTotalMiB: Math.round(totalmem() / 2 ** 20), node: process.version, platform: `${process.platform} ${process.arch}`, cpu: cpus()[0]?.model ?? "unknown" },
    sections: [],
    durationS: 0,
  };
  const add = (s: Report["sections"][number]) => {
    report.sections.push(s);
    if (print) printSection(s);
  };
  const hc = await hostCalls(cfg, log);
  add(hc.roundTrip);
  add(hc.throughput);
  add(await emitRate(cfg, log));
  add(await mcpPeers(cfg, hc.sdkMemory, log));
  add(await componentTools(cfg, log));
  add(await memory(cfg, log));
  report.durationS = round((Date.now() - t0) / 1000, 1);
  return report;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const mode = process.argv.includes("--quick") ? "quick" : "full";
  const cfg = CONFIGS[mode];
  const from = packagesFrom() === "source" ? "TypeScript sources (tsx)" : "built dist/, as shipped";
  console.log(`brain bench (${mode}) on ${availableParallelism()} cores, node ${process.version}; packages from ${from}`);
  const report = await runBench(cfg, { log: (s) => console.error(s), print: true });
  const out = new URL("../results.json", import.meta.url);
  writeFileSync(out, JSON.stringify(report, null, 2) + "\n");
  const goals = report.sections.flatMap((s) => s.figures.filter((f) => f.goal));
  console.log(`\ngoals: ${goals.filter((g) => g.goal!.pass).length} pass, ${goals.filter((g) => !g.goal!.pass).length} miss; ${report.durationS} s; wrote bench/results.json`);
}
