// Section 14 (issue 27): memory per journal record of resident sessions, a PostgreSQL node beside a
// SQLite node in the same run. Each is measured in a child process of its own (record-memory-child.ts):
// S sessions stay resident while their turns add records, and the heap after forced GCs is read
// before and after. A store that keeps the records of the sessions it runs in memory (what a
// PostgreSQL node did before the storage interfaces became asynchronous) grows by each record's size;
// one that reads them back from the database grows by what the sessions themselves hold.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startBrain } from "@aexhq/brain-runtime";
import { pgBinDir, startPgCluster } from "../../runtime/test/helpers/pg-cluster.ts";
import { freshDatabase } from "../../runtime/test/helpers/nodes.ts";
import type { BenchConfig } from "./config.ts";
import { figure } from "./report.ts";
import type { Section } from "./report.ts";
import { round } from "./stats.ts";

const CHILD = fileURLToPath(new URL("./record-memory-child.ts", import.meta.url));
/** Below this, a per-record growth is the measurement's own noise (a GC's leftovers over thousands of records). */
const NOISE_BYTES = 16;

export interface RecordMemoryResult {
  journal: "sqlite" | "postgres";
  sessions: number;
  records: number;
  /** Heap (used + external) after forced GCs, before and after the records were added. */
  heapBefore: number;
  heapAfter: number;
  rssBefore: number;
  rssAfter: number;
  resident: number;
}

export async function recordMemory(cfg: BenchConfig, log: (s: string) => void): Promise<Section> {
  const s: Section = { id: "14", title: "Memory per journal record of resident sessions: a PostgreSQL node vs a SQLite node (issue 27)", figures: [], notes: [] };
  const sessions = cfg.recordMemorySessions;
  const turns = cfg.recordMemoryTurns;
  if (pgBinDir() === undefined) {
    s.notes.push("PostgreSQL server binaries not found (apt-get install postgresql, or set BRAIN_PG_BIN): the PostgreSQL node is not measured");
    return s;
  }
  log(`  record memory: ${sessions} resident sessions × ${turns} turns, SQLite and PostgreSQL nodes (child processes)`);
  const cluster = await startPgCluster();
  try {
    const db = await freshDatabase(cluster.url, "bench_record_memory");
    const sqlite = measure({ journal: "sqlite", sessions, turns });
    const postgres = measure({ journal: db, sessions, turns });
    const per = (r: RecordMemoryResult) => (r.heapAfter - r.heapBefore) / r.records;
    const sq = per(sqlite);
    const pgPer = per(postgres);
    const floor = Math.max(sq, NOISE_BYTES);
    s.figures.push(figure("SQLite node: heap growth per record", round(sq, 1), "B"));
    s.figures.push(
      figure("PostgreSQL node: heap growth per record", round(pgPer, 1), "B", { name: `SQLite node (floor ${NOISE_BYTES} B)`, value: round(floor, 1) }, { text: "PostgreSQL ≤ 1.2× SQLite per record", pass: pgPer <= 1.2 * floor }),
    );
    for (const r of [sqlite, postgres]) {
      s.notes.push(
        `${r.journal}: ${r.records} records over ${r.sessions} sessions (${r.resident} resident at the end); heap ${mib(r.heapBefore)} → ${mib(r.heapAfter)} MiB, RSS ${mib(r.rssBefore)} → ${mib(r.rssAfter)} MiB`,
      );
    }
    s.notes.push(`a growth below ${NOISE_BYTES} B per record is measurement noise; the ratio is taken against at least that`);
  } finally {
    await cluster.stop();
  }
  return s;
}

function measure(args: { journal: string; sessions: number; turns: number }): RecordMemoryResult {
  const out = execFileSync(process.execPath, [...process.execArgv, "--expose-gc", CHILD, JSON.stringify(args)], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 600_000 });
  return JSON.parse(out) as RecordMemoryResult;
}

const mib = (b: number) => round(b / 2 ** 20, 1);


/** In the child: `sessions` resident sessions, each given `turns` turns of a scripted model (5 records a turn). */
export async function measureRecordMemory(args: { journal: string; sessions: number; turns: number }): Promise<RecordMemoryResult> {
  const gc = (globalThis as { gc?: () => void }).gc!;
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 20));
    }
    const m = process.memoryUsage();
    return { heap: m.heapUsed + m.external, rss: m.rss };
  };
  const postgres = args.journal !== "sqlite";
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dir = mkdtempSync(join(tmpdir(), "brain-bench-records-"));
  const brain = await startBrain({ dataDir: dir, port: 0, components: false, journal: postgres ? (args.journal as `postgres://${string}`) : "sqlite", residentSessions: args.sessions * 2, ...(postgres ? { nodeId: "bench-node", leaseMs: 30_000 } : {}) });
  try {
    const { sessions } = brain.internals;
    const script = Array.from({ length: args.turns + 1 }, (_, i) => ({ text: `answer ${i}: ${"x".repeat(120)}` }));
    const ids: string[] = [];
    for (let i = 0; i < args.sessions; i++) ids.push((await sessions.create({ model: { provider: "scripted", script }, tools: [] })).id);
    // One turn each first, so what every resident session holds anyway (its loop, its state) is in the baseline.
    const turn = async (id: string, n: number) => {
      const m = await sessions.send(id, `question ${n}: ${"y".repeat(120)}`);
      await m.end();
    };
    await Promise.all(ids.map((id) => turn(id, 0)));
    await brain.internals.store.flush();
    const before = await settle();
    const stats = brain.internals.store.stats;
    const recordsBefore = stats.records;
    for (let t = 1; t < args.turns; t++) await Promise.all(ids.map((id) => turn(id, t)));
    await brain.internals.store.flush();
    const after = await settle();
    return {
      journal: postgres ? "postgres" : "sqlite",
      sessions: args.sessions,
      records: stats.records - recordsBefore,
      heapBefore: before.heap,
      heapAfter: after.heap,
      rssBefore: before.rss,
      rssAfter: after.rss,
      resident: sessions.held.resident,
    };
  } finally {
    await brain.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
