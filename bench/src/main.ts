// npm run bench [-- --quick | --soak | --nodes] [-- --only=7,8,13,15]: every figure beside a baseline measured in the same run.
import { writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { CONFIGS, nodesConfig, soakConfig } from "./config.ts";
import type { BenchConfig } from "./config.ts";
import { hostCalls } from "./host-calls.ts";
import { emitRate } from "./emit.ts";
import { mcpPeers } from "./mcp.ts";
import { mcpEnvironment } from "./mcp-environment.ts";
import { pgListingBench } from "./pg-listing.ts";
import { memory } from "./memory.ts";
import { recordMemory } from "./record-memory.ts";
import { componentTools } from "./components.ts";
import { journalGrowth } from "./growth.ts";
import { historyAtRest } from "./history.ts";
import { listingBench } from "./listing.ts";
import { tenantLimits } from "./tenant-limits.ts";
import { soak } from "./soak.ts";
import { nodesBench } from "./nodes.ts";
import { tracingCost } from "./tracing.ts";
import { printSection } from "./report.ts";
import type { Report } from "./report.ts";
import { round } from "./stats.ts";

/** The `brain-source` condition resolves the packages to their .ts sources; without it, to dist/. */
function packagesFrom(): "dist" | "source" {
  return import.meta.resolve("@aexhq/brain").endsWith(".ts") ? "source" : "dist";
}

export async function runBench(cfg: BenchConfig, opts: { log?: (s: string) => void; print?: boolean; only?: string[] } = {}): Promise<Report> {
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
  const want = (...ids: string[]) => opts.only === undefined || ids.some((id) => opts.only!.includes(id));
  if (want("1", "2", "4")) {
    const hc = await hostCalls(cfg, log);
    if (want("1")) add(hc.roundTrip);
    if (want("2")) add(hc.throughput);
    if (want("3")) add(await emitRate(cfg, log));
    if (want("4")) add(await mcpPeers(cfg, hc.sdkMemory, log));
  } else if (want("3")) add(await emitRate(cfg, log));
  if (want("5")) add(await componentTools(cfg, log));
  if (want("6")) add(await memory(cfg, log));
  if (want("7")) add(await journalGrowth(cfg, log));
  if (want("8")) add(await historyAtRest(cfg, log));
  if (want("13")) add(await listingBench(cfg, log));
  if (want("14")) add(await recordMemory(cfg, log));
  if (want("15")) add(await tracingCost(cfg, log));
  if (want("16")) add(await tenantLimits(cfg, log));
  if (want("17")) add(await mcpEnvironment(cfg, log));
  if (want("18")) add(await pgListingBench(cfg, log));
  report.durationS = round((Date.now() - t0) / 1000, 1);
  return report;
}

/** `--soak` (section 9 alone, its own mode): 64 sessions doing turns for BENCH_SOAK_SECONDS (300). */
export async function runSoak(opts: { log?: (s: string) => void; print?: boolean; smoke?: boolean } = {}): Promise<Report> {
  const t0 = Date.now();
  const cfg = soakConfig(process.env, opts.smoke ?? false);
  const report: Report = {
    date: new Date().toISOString(),
    command: `${cfg.seconds === 300 ? "" : `BENCH_SOAK_SECONDS=${cfg.seconds} `}npm run bench -- --soak`,
    mode: opts.smoke ? "smoke" : "soak",
    packages: packagesFrom(),
    machine: { nproc: availableParallelism(), memTotalMiB: Math.round(totalmem() / 2 ** 20), node: process.version, platform: `${process.platform} ${process.arch}`, cpu: cpus()[0]?.model ?? "unknown" },
    sections: [await soak(cfg, opts.log ?? (() => {}))],
    durationS: 0,
  };
  if (opts.print) printSection(report.sections[0]!);
  report.durationS = round((Date.now() - t0) / 1000, 1);
  return report;
}

/** `--nodes` (sections 10–12, its own mode): the SQLite node and 1, 2, 3 nodes on one PostgreSQL, each node a process; failover. */
export async function runNodes(opts: { log?: (s: string) => void; print?: boolean; smoke?: boolean; quick?: boolean } = {}): Promise<Report> {
  const t0 = Date.now();
  const cfg = nodesConfig(opts.smoke ? "smoke" : opts.quick ? "quick" : "full");
  const report: Report = {
    date: new Date().toISOString(),
    command: `${process.env.BENCH_RUNTIME_DIR ? `BENCH_RUNTIME_DIR=${process.env.BENCH_RUNTIME_DIR} ` : ""}npm run bench -- --nodes${opts.quick ? " --quick" : ""}`,
    mode: opts.smoke ? "smoke" : "nodes",
    packages: packagesFrom(),
    machine: { nproc: availableParallelism(), memTotalMiB: Math.round(totalmem() / 2 ** 20), node: process.version, platform: `${process.platform} ${process.arch}`, cpu: cpus()[0]?.model ?? "unknown" },
    sections: await nodesBench(cfg, opts.log ?? (() => {}), packagesFrom()),
    durationS: 0,
  };
  if (opts.print) for (const s of report.sections) printSection(s);
  report.durationS = round((Date.now() - t0) / 1000, 1);
  return report;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const isSoak = process.argv.includes("--soak");
  const isNodes = process.argv.includes("--nodes");
  const mode = isSoak ? "soak" : isNodes ? "nodes" : process.argv.includes("--quick") ? "quick" : process.argv.includes("--smoke") ? "smoke" : "full";
  const only = process.argv.find((a) => a.startsWith("--only="))?.slice("--only=".length).split(",");
  const from = packagesFrom() === "source" ? "TypeScript sources (tsx)" : "built dist/, as shipped";
  console.log(`brain bench (${mode}${only ? `, sections ${only.join(",")} only` : ""}) on ${availableParallelism()} cores, node ${process.version}; packages from ${from}`);
  const log = (s: string) => console.error(s);
  const report = isSoak ? await runSoak({ log, print: true }) : isNodes ? await runNodes({ log, print: true, quick: process.argv.includes("--quick") }) : await runBench(CONFIGS[mode as "quick" | "full" | "smoke"], { log, print: true, ...(only ? { only } : {}) });
  // --only writes beside results.json so a partial run never replaces the full run's figures.
  const out = new URL(isSoak ? "../results-soak.json" : isNodes ? (process.argv.includes("--quick") ? "../results-nodes-quick.json" : "../results-nodes.json") : only ? "../results-only.json" : "../results.json", import.meta.url);
  writeFileSync(out, JSON.stringify(report, null, 2) + "\n");
  const goals = report.sections.flatMap((s) => s.figures.filter((f) => f.goal));
  console.log(`\ngoals: ${goals.filter((g) => g.goal!.pass).length} pass, ${goals.filter((g) => !g.goal!.pass).length} miss; ${report.durationS} s; wrote ${fileURLToPath(out).replace(/.*\/bench\//, "bench/")}`);
}
