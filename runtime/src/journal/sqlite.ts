import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";
import { BatchingStore } from "./store.ts";
import type { HostRow } from "./store.ts";

const CHECKPOINT_WORKER = new URL("./checkpoint-worker.mjs", import.meta.url);
/** How often the checkpoint thread copies the WAL into the database file. */
const CHECKPOINT_INTERVAL_MS = 200;

/** Where one session's records lie in the log (rowids), and its last committed sequence. */
interface SessionSpan {
  first: number;
  last: number;
  sequence: number;
}

/**
 * SQLite journal (better-sqlite3, WAL, synchronous=NORMAL). WAL+NORMAL survives a process kill
 * (the WAL is written before commit returns); only an OS crash may lose the last transactions.
 *
 * Two choices make group commits cheap (both measured, see docs/decisions/runtime.md):
 * - The journal is one append-only log keyed by rowid, so a transaction only touches the last
 *   pages of one b-tree. A table clustered by (session, sequence) made every commit write a page
 *   per session it touched: ~5× slower with 64 busy sessions. Per-session order and uniqueness are
 *   kept by the store (sequences must increase, or the whole batch fails); each session's rowid
 *   span bounds the scan that reads it back.
 * - Checkpoints (WAL → database file, with an fsync of that file) run on a worker thread with its
 *   own connection instead of inside every ~1000th commit (3× slower group commits here).
 *   Durability does not depend on checkpoints.
 */
export class SqliteStore extends BatchingStore {
  readonly kind = "sqlite" as const;
  readonly db: Database.Database;
  private commitMany: (records: JournalRecord[]) => void;
  private selectSpan: Database.Statement;
  private spans = new Map<string, SessionSpan>();
  private lastId = 0;
  private checkpointer: Worker | undefined;

  constructor(readonly file: string) {
    super();
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = NORMAL");
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS journal (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        sequence INTEGER NOT NULL,
        at INTEGER NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL
      );
      CREATE TABLE IF NOT EXISTS hosts (
        host_id TEXT PRIMARY KEY,
        salt TEXT NOT NULL,
        hash TEXT NOT NULL,
        contracts TEXT NOT NULL,
        registered_at INTEGER NOT NULL
      );
    `);
    this.migrateClusteredTable();
    for (const row of this.db.prepare("SELECT session_id, min(id) AS first, max(id) AS last, max(sequence) AS sequence FROM journal GROUP BY session_id").all() as Array<{ session_id: string } & SessionSpan>) {
      this.spans.set(row.session_id, { first: row.first, last: row.last, sequence: row.sequence });
      this.lastId = Math.max(this.lastId, row.last);
    }
    const insert = this.db.prepare("INSERT INTO journal (id, session_id, sequence, at, type, data) VALUES (?, ?, ?, ?, ?, ?)");
    this.selectSpan = this.db.prepare("SELECT session_id, sequence, at, type, data FROM journal WHERE id BETWEEN ? AND ? AND session_id = ? ORDER BY id");
    this.commitMany = this.db.transaction((records: JournalRecord[]) => {
      let id = this.lastId;
      for (const r of records) insert.run(++id, r.sessionId, r.sequence, r.at, r.type, JSON.stringify(r.data));
    });
    this.startCheckpointer();
  }

  /** Journals written before the log layout kept records in a table clustered by (session, sequence). */
  private migrateClusteredTable(): void {
    const old = this.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'records'").get();
    if (old === undefined) return;
    this.db.transaction(() => {
      this.db.exec("INSERT INTO journal (session_id, sequence, at, type, data) SELECT session_id, sequence, at, type, data FROM records ORDER BY session_id, sequence; DROP TABLE records;");
    })();
  }

  protected commitBatch(records: JournalRecord[]): void {
    // Check order first, so a bad batch writes nothing (what the old primary key guaranteed).
    const next = new Map<string, SessionSpan>();
    let id = this.lastId;
    for (const r of records) {
      id += 1;
      const span = next.get(r.sessionId) ?? this.spans.get(r.sessionId);
      if (span !== undefined && r.sequence <= span.sequence) {
        throw new BrainRuntimeError("internal", `journal: sequence ${r.sequence} of ${r.sessionId} is not after ${span.sequence}`);
      }
      next.set(r.sessionId, { first: span?.first ?? id, last: id, sequence: r.sequence });
    }
    this.commitMany(records);
    this.lastId = id;
    for (const [sessionId, span] of next) this.spans.set(sessionId, span);
  }

  /** Hands checkpoints to a worker thread; if it cannot run, SQLite's automatic checkpoints take over again. */
  private startCheckpointer(): void {
    this.db.pragma("wal_autocheckpoint = 0");
    const worker = new Worker(CHECKPOINT_WORKER, { workerData: { file: this.file, intervalMs: CHECKPOINT_INTERVAL_MS } });
    worker.unref();
    const fallback = () => {
      if (this.checkpointer !== worker) return;
      this.checkpointer = undefined;
      if (this.db.open) this.db.pragma("wal_autocheckpoint = 1000");
    };
    worker.on("error", fallback);
    worker.on("exit", fallback);
    this.checkpointer = worker;
  }

  protected async closeStorage(): Promise<void> {
    const worker = this.checkpointer;
    this.checkpointer = undefined;
    if (worker !== undefined) {
      const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
      worker.postMessage("close");
      // A worker that does not answer (still starting, stuck on a lock) is stopped outright.
      const timer = setTimeout(() => void worker.terminate(), 2000);
      await exited;
      clearTimeout(timer);
    }
    // The last connection's close checkpoints what is left and removes the WAL.
    this.db.close();
  }

  loadRecords(): JournalRecord[] {
    const rows = this.db.prepare("SELECT session_id, sequence, at, type, data FROM journal ORDER BY id").all() as Row[];
    // Grouped by session, in sequence order (log order is sequence order within a session).
    const bySession = new Map<string, JournalRecord[]>();
    for (const r of toRecords(rows)) {
      let list = bySession.get(r.sessionId);
      if (!list) bySession.set(r.sessionId, (list = []));
      list.push(r);
    }
    return [...bySession.values()].flat();
  }

  loadSession(sessionId: string): JournalRecord[] {
    const span = this.spans.get(sessionId);
    if (span === undefined) return [];
    return toRecords(this.selectSpan.all(span.first, span.last, sessionId) as Row[]);
  }

  /** Nothing to do: the rows stay on disk (the journal of a deleted session stays readable). */
  forget(_sessionId: string): void {}

  saveHost(row: HostRow): void {
    this.db
      .prepare("INSERT INTO hosts (host_id, salt, hash, contracts, registered_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(host_id) DO UPDATE SET contracts = excluded.contracts")
      .run(row.hostId, row.salt, row.hash, JSON.stringify(row.contracts), row.registeredAt);
  }

  loadHosts(): HostRow[] {
    const rows = this.db.prepare("SELECT host_id, salt, hash, contracts, registered_at FROM hosts").all() as Array<{ host_id: string; salt: string; hash: string; contracts: string; registered_at: number }>;
    return rows.map((r) => ({ hostId: r.host_id, salt: r.salt, hash: r.hash, contracts: JSON.parse(r.contracts), registeredAt: r.registered_at }));
  }
}

interface Row {
  session_id: string;
  sequence: number;
  at: number;
  type: string;
  data: string;
}

function toRecords(rows: Row[]): JournalRecord[] {
  return rows.map((r) => ({ sessionId: r.session_id, sequence: r.sequence, at: r.at, type: r.type, data: JSON.parse(r.data) }) as JournalRecord);
}
