// Section 3: `await ctx.emit` committed per second, one tool and 64 tools at once (Node SDK host).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { BenchConfig } from "./config.ts";
import { echoThroughput } from "./echo.ts";
import { startFixture, invokeLikePayload } from "./fixture.ts";
import type { JournalKind } from "./fixture.ts";
import { figure } from "./report.ts";
import type { Section } from "./report.ts";
import { now, round } from "./stats.ts";

/**
 * Baseline for grouping: one SQLite transaction per record (WAL, synchronous=NORMAL), the runtime
 * store's row shape and log layout, checkpoints left out of the commit path as the store does.
 */
function ungroupedSqliteRate(ms: number): number {
  const dir = mkdtempSync(join(tmpdir(), "brain-bench-sql-"));
  const db = new Database(join(dir, "j.sqlite"));
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("wal_autocheckpoint = 0");
    db.exec("CREATE TABLE journal (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, sequence INTEGER NOT NULL, at INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL)");
    const insert = db.prepare("INSERT INTO journal (id, session_id, sequence, at, type, data) VALUES (?, ?, ?, ?, ?, ?)");
    const one = db.transaction((i: number) => insert.run(i, "ses_0123456789abcdef0123", i, Date.now(), "tool.event", JSON.stringify({ callId: "ses_0123456789abcdef0123:2", kind: "tick", data: { i } })));
    let i = 0;
    const t = now();
    const end = Date.now() + ms;
    while (Date.now() < end) one(++i);
    return i / ((now() - t) / 1e9);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function emitRate(cfg: BenchConfig, log: (s: string) => void): Promise<Section> {
  const s: Section = { id: "3", title: "3. Emit rate (await ctx.emit, committed, Node SDK host)", figures: [], notes: [] };
  const payload = invokeLikePayload();
  const echo1 = await echoThroughput(payload, 1, cfg.throughputMs);
  const echo64 = await echoThroughput(payload, 64, cfg.throughputMs);
  const ungrouped = ungroupedSqliteRate(cfg.throughputMs);
  const n = cfg.emitsPerTool;
  for (const journal of ["memory", "sqlite-normal"] as JournalKind[]) {
    log(`  emit: ${journal}`);
    const f = await startFixture({ journal, host: "sdk", sessions: 64, tools: "emitter" });
    try {
      await f.call(0, { n: Math.min(n, 100) });
      let before = { ...f.internals.store.stats };
      let t = now();
      await f.call(0, { n });
      const one = n / ((now() - t) / 1e9);
      let st = f.internals.store.stats;
      const perTx1 = (st.records - before.records) / Math.max(1, st.transactions - before.transactions);
      before = { ...st };
      t = now();
      await Promise.all(f.sessions.map((_, i) => f.call(i, { n })));
      const many = (64 * n) / ((now() - t) / 1e9);
      st = f.internals.store.stats;
      const perTx64 = (st.records - before.records) / Math.max(1, st.transactions - before.transactions);
      s.figures.push(figure(`1 tool, ${journal}`, round(one, 0), "emits/s", { name: "sequential ws echo", value: round(echo1, 0) }));
      s.figures.push(figure(`64 tools at once, ${journal}`, round(many, 0), "emits/s", { name: "ws echo ×64", value: round(echo64, 0) }));
      if (journal === "sqlite-normal") s.figures.push(figure("64 tools at once, sqlite-normal, vs ungrouped commits", round(many, 0), "emits/s", { name: "1 record/transaction SQLite", value: round(ungrouped, 0) }));
      s.notes.push(`${journal}: ${round(perTx1, 2)} records per commit transaction with 1 tool, ${round(perTx64, 2)} with 64 tools (group commit: every append of one event-loop tick shares a transaction)`);
    } finally {
      await f.close();
    }
  }
  s.notes.push("wake batching: tool.event commits never wake the Agentloop (only results, returns and finishes do), so the 5 ms window costs emit nothing; its effect shows in the whole-turn figure of section 1");
  return s;
}
