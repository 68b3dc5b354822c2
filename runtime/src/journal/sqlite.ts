import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import type { JournalRecord, KeyLimits, SessionCreatedRecord } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";
import { BatchingStore, dataBytes, pageOf } from "./store.ts";
import type { HostRow, KeyRow, KeyedMessage, ListQuery, ListedSession, SessionPage } from "./store.ts";
import { advanceHead, copyHead, hasOpenWork, headStatus, listingOrder, newHead } from "./head.ts";
import type { HeadStatus, SessionHead } from "./head.ts";
import { SqliteLog, readLog } from "./sqlite-log.ts";
import type { LoggedRow } from "./sqlite-log.ts";
import type { Logger } from "../logger.ts";

const CHECKPOINT_WORKER = new URL("./checkpoint-worker.mjs", import.meta.url);
/** How often the checkpoint thread copies the WAL into the database file. */
const CHECKPOINT_INTERVAL_MS = 200;
/**
 * Past this many frames (about 4 MiB, SQLite's own auto-checkpoint size) the checkpoint thread
 * makes the WAL start over (checkpoint-worker.mjs): under steady writes it would otherwise grow
 * for as long as they last.
 */
const WAL_RESTART_FRAMES = 1000;

/** Every MARK_EVERY-th record of a session is indexed, so a read can start near any sequence. */
const MARK_EVERY = 64;
/** Sequence 1 (session.created, which paging a session in reads) is marked too. */
const marked = (sequence: number) => sequence === 1 || sequence % MARK_EVERY === 0;
/** How often the session directory (heads and tails) is written; recovery replays the log after it. */
const DIRECTORY_FLUSH_MS = 1000;
/** How long rows wait in the log (sqlite-log.ts) before they are written into SQLite's tables, many commits in one transaction. */
const INDEX_AFTER_MS = 5;
/** Rows waiting past this many are written at once (bounds the memory they hold and one transaction's length). */
const INDEX_AT_ROWS = 4096;
/**
 * Past this size the log is emptied, after the transaction that indexed its rows is on disk: a
 * synchronous=FULL commit, 3–9 ms on this project's VM, on the event loop. 16 MiB is about a second
 * of the heaviest load measured (a reset a second) and what a start after a crash reads at most.
 */
const LOG_RESET_BYTES = 16 * 1024 * 1024;

export interface SqliteStoreOptions {
  /**
   * Each group commit's log line is flushed to the disk before the commit returns (`fdatasync`, as
   * SQLite's synchronous=FULL): survives an OS crash, at a disk flush per group commit. Default
   * false: the line survives the process being killed, as synchronous=NORMAL.
   */
  sync?: boolean;
  /** Where a failed background write into SQLite's tables is reported (it is retried). */
  logger?: Logger;
}

/** A session the store is writing or recently read: its head and the rowid of its last record. */
interface Entry {
  head: SessionHead;
  tail: number;
  /** Changed since the directory was last written. */
  dirty: boolean;
  /** The directory generation it was last used in (clean entries unused for two generations are dropped). */
  used: number;
}

interface DirectoryRow {
  session_id: string;
  tail: number;
  created_at: number;
  last_sequence: number;
  activations: number;
  model_requests: number;
  open_calls: number;
  open_model_requests: number;
  turn_open: number;
  deleted: number;
  owner: string | null;
}

/**
 * SQLite journal (better-sqlite3, WAL, synchronous=NORMAL) with a log in front (sqlite-log.ts). A
 * group commit is one line appended to `<file>-log` with one `write`, acknowledged when that
 * returns: it survives the process being killed, as WAL+NORMAL does; only an OS crash may lose
 * the last commits (with `sync`, not even that: each line is flushed to the disk first). The rows
 * are written into the tables below INDEX_AFTER_MS later, the commits of those milliseconds in one
 * transaction, so no SQLite commit (its locks, its WAL frames) is on a call's path. Every read of
 * rows writes what is waiting first, so reads see every acknowledged commit. Opening the store
 * writes the rows a crash left only in the log; the log is emptied once its rows' transaction is
 * on disk (past LOG_RESET_BYTES, at open, and removed at close).
 *
 * Layout (measured, see docs/decisions/runtime.md):
 * - The journal is one append-only log keyed by rowid, so a group commit only touches the last
 *   pages of one b-tree. An index or a table keyed by (session, sequence) makes every commit
 *   write a page per session it touches: 4-5× slower group commits with 64 busy sessions.
 * - Each row holds `prev`, the rowid of its session's previous record, and every 64th record of a
 *   session has a row in `marks` (session, sequence → rowid). A read of one session starts at its
 *   tail or at the nearest mark above what it wants and follows `prev`: it visits its own rows only
 *   (at most 63 beyond the range), and a commit writes a mark page for 1 record in 64.
 * - The `sessions` directory (each session's head and tail) is written every second, not in every
 *   commit, with the rowid it is accurate through; opening the store replays the few log rows
 *   after that. Only heads of sessions being written or recently read are held in memory.
 * - Listing reads the directory through two indexes, (state, created_at, session_id) and
 *   (owner, state, created_at, session_id), `state` being a generated column (idle, running,
 *   deleted): a page is one index range per state, newest first, whatever the number of sessions.
 *   The indexes are written with the directory, once a second, never in a commit; the heads changed
 *   since (new sessions, deleted ones, turns opened or closed) are merged from memory, so a listing
 *   sees every acknowledged commit (`listSessions`).
 * - Checkpoints (WAL → database file, with an fsync of that file) run on a worker thread with its
 *   own connection instead of inside every ~1000th commit (3× slower group commits here). Past
 *   WAL_RESTART_FRAMES the thread also makes the WAL start over (a RESTART checkpoint, which holds
 *   the writer for the last few frames' copy), so steady writes reuse the WAL's blocks instead of
 *   growing it without end. Durability does not depend on checkpoints or on the directory.
 * - Idempotency keys (message.user `idempotencyKey`) are found through a partial expression index,
 *   `journal_message_keys` on (session_id, json_extract(data, '$.idempotencyKey')) WHERE type =
 *   'message.user': only message.user rows have an entry, so a group commit of other records writes
 *   no page of it, and a commit with a message writes one.
 */
export class SqliteStore extends BatchingStore {
  readonly kind = "sqlite" as const;
  readonly db: Database.Database;
  /** Writes logged rows (and their marks) into the tables, in one transaction. */
  private indexRows: (rows: readonly LoggedRow[]) => void;
  private log: SqliteLog;
  /** Rows in the log and not yet in the tables, in id order. */
  private unindexed: LoggedRow[] = [];
  private indexTimer: NodeJS.Timeout | undefined;
  private readonly logger: Logger | undefined;
  /** Held while the store is open: one process writes a journal (sqlite-lock). */
  private readonly lock: Database.Database;
  private selectRow: Database.Statement;
  private selectMark: Database.Statement;
  private selectDirectory: Database.Statement;
  private selectKeyed: Database.Statement;
  private listings = new Map<string, Database.Statement>();
  private entries = new Map<string, Entry>();
  private generation = 0;
  private lastId = 0;
  private checkpointer: Worker | undefined;
  private directoryTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly file: string,
    opts: SqliteStoreOptions = {},
  ) {
    super();
    this.logger = opts.logger;
    this.lock = holdLock(`${file}-lock`);
    // Whatever fails from here on (a damaged log, a full disk) releases the lock and the connection:
    // the process may open the journal again once the cause is mended.
    let db: Database.Database | undefined;
    try {
      this.db = db = new Database(file);
      this.db.pragma("journal_mode = WAL");
      this.db.pragma("synchronous = NORMAL");
      // Reads of old sessions hit pages spread over the whole file: map it rather than copy each page in.
      this.db.pragma("mmap_size = 268435456");
      this.db.exec(`
        CREATE TABLE IF NOT EXISTS journal (
          id INTEGER PRIMARY KEY,
          session_id TEXT NOT NULL,
          sequence INTEGER NOT NULL,
          at INTEGER NOT NULL,
          type TEXT NOT NULL,
          data TEXT NOT NULL,
          prev INTEGER
        );
        CREATE TABLE IF NOT EXISTS marks (
          session_id TEXT NOT NULL,
          sequence INTEGER NOT NULL,
          id INTEGER NOT NULL,
          PRIMARY KEY (session_id, sequence)
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS sessions (
          session_id TEXT PRIMARY KEY,
          tail INTEGER NOT NULL,
          created_at INTEGER NOT NULL,
          last_sequence INTEGER NOT NULL,
          activations INTEGER NOT NULL,
          model_requests INTEGER NOT NULL,
          open_calls INTEGER NOT NULL,
          open_model_requests INTEGER NOT NULL,
          turn_open INTEGER NOT NULL,
          deleted INTEGER NOT NULL,
          owner TEXT
        );
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS hosts (
          host_id TEXT PRIMARY KEY,
          salt TEXT NOT NULL,
          hash TEXT NOT NULL,
          contracts TEXT NOT NULL,
          registered_at INTEGER NOT NULL,
          owner TEXT
        );
        CREATE TABLE IF NOT EXISTS keys (
          key_id TEXT PRIMARY KEY,
          name TEXT NOT NULL,
          hash TEXT NOT NULL,
          created_at INTEGER NOT NULL,
          revoked_at INTEGER,
          limits TEXT
        );
      `);
      this.addColumns();
      this.addListingIndexes();
      this.migrate();
      // After migrate (an old layout's rows are in `journal` by then): built once over the message rows.
      this.db.exec("CREATE INDEX IF NOT EXISTS journal_message_keys ON journal (session_id, json_extract(data, '$.idempotencyKey')) WHERE type = 'message.user'");
      this.lastId = (this.db.prepare("SELECT max(id) AS id FROM journal").get() as { id: number | null }).id ?? 0;
      const insert = this.db.prepare("INSERT INTO journal (id, session_id, sequence, at, type, data, prev) VALUES (?, ?, ?, ?, ?, ?, ?)");
      const mark = this.db.prepare("INSERT INTO marks (session_id, sequence, id) VALUES (?, ?, ?)");
      this.selectRow = this.db.prepare("SELECT session_id, sequence, at, type, data, prev FROM journal WHERE id = ?");
      this.selectMark = this.db.prepare("SELECT id FROM marks WHERE session_id = ? AND sequence >= ? ORDER BY sequence LIMIT 1");
      this.selectDirectory = this.db.prepare("SELECT * FROM sessions WHERE session_id = ?");
      // The same expression and condition as journal_message_keys, so the planner uses it.
      this.selectKeyed = this.db.prepare("SELECT sequence, data FROM journal WHERE session_id = ? AND type = 'message.user' AND json_extract(data, '$.idempotencyKey') = ? LIMIT 1");
      this.indexRows = this.db.transaction((rows: readonly LoggedRow[]) => {
        for (const r of rows) {
          insert.run(r.id, r.sessionId, r.sequence, r.at, r.type, r.data, r.prev);
          if (marked(r.sequence)) mark.run(r.sessionId, r.sequence, r.id);
        }
      });
      this.log = this.recoverLog(`${file}-log`, opts.sync ?? false);
      this.replayAfterDirectory();
      this.directoryTimer = setInterval(() => {
        try {
          this.writeDirectory();
        } catch (e) {
          // Recovery replays the rows after the directory's last write: a late directory costs only time at the next start.
          this.logger?.error("journal: writing the session directory failed; retrying in 1 s", { error: e, file: this.file });
        }
      }, DIRECTORY_FLUSH_MS);
      this.directoryTimer.unref();
      this.startCheckpointer();
    } catch (e) {
      clearInterval(this.directoryTimer);
      db?.close();
      this.lock.close();
      throw e;
    }
  }

  /**
   * Writes the rows a crash left in the log and not in the tables (the process died within
   * INDEX_AFTER_MS of their commit), durably, then empties the log and opens it for appends.
   */
  private recoverLog(path: string, sync: boolean): SqliteLog {
    const rows = readLog(path, this.lastId);
    if (rows.length > 0) {
      // Rows missing between the tables and the log (a damaged data folder): nothing is linked over the hole.
      if (rows[0]!.id !== this.lastId + 1) throw new BrainRuntimeError("conflict", `journal: the log ${path} starts at row ${rows[0]!.id} but the tables end at ${this.lastId}: rows are missing`);
      this.indexDurably(rows);
      this.lastId = rows[rows.length - 1]!.id;
    }
    const log = new SqliteLog(path, sync);
    if (log.bytes > 0) log.reset();
    return log;
  }

  /** Indexes rows in a transaction that is on disk when it returns (synchronous=FULL for it), so the log holding them may be emptied. */
  private indexDurably(rows: readonly LoggedRow[]): void {
    this.db.pragma("synchronous = FULL");
    try {
      this.indexRows(rows);
    } finally {
      this.db.pragma("synchronous = NORMAL");
    }
  }

  /** Writes the logged rows into the tables (every read of rows comes through here first, so it sees every commit). */
  private index(): void {
    if (this.indexTimer !== undefined) {
      clearTimeout(this.indexTimer);
      this.indexTimer = undefined;
    }
    if (this.unindexed.length === 0) return;
    const reset = this.log.bytes >= LOG_RESET_BYTES;
    if (reset) this.indexDurably(this.unindexed);
    else this.indexRows(this.unindexed);
    this.unindexed = [];
    // Every line in the log is now in the tables, on disk: it starts over.
    if (reset) this.log.reset();
  }

  /** The timer's indexing: a failure (disk full, I/O error) is reported and retried; the rows are safe in the log meanwhile. */
  private readonly indexLater = (): void => {
    this.indexTimer = undefined;
    try {
      this.index();
    } catch (e) {
      this.logger?.error("journal: writing logged rows into SQLite failed; retrying in 1 s (they are in the log)", { error: e, rows: this.unindexed.length, file: this.file });
      if (this.indexTimer === undefined && !this.closed) this.indexTimer = setTimeout(this.indexLater, 1000).unref();
    }
  };

  /** Columns added since a table was first created (owners came with API keys). */
  private addColumns(): void {
    for (const [table, column] of [["sessions", "owner"], ["hosts", "owner"], ["keys", "limits"]] as const) {
      const columns = this.db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>;
      if (!columns.some((c) => c.name === column)) this.db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} TEXT`);
    }
  }

  /**
   * The listing indexes (created once on a journal of an earlier version; a million sessions take a
   * few seconds). `state` is computed by SQLite from the head's columns, never written.
   */
  private addListingIndexes(): void {
    const columns = this.db.prepare("PRAGMA table_xinfo(sessions)").all() as Array<{ name: string }>;
    if (!columns.some((c) => c.name === "state")) {
      this.db.exec(`ALTER TABLE sessions ADD COLUMN state INTEGER GENERATED ALWAYS AS (${STATE_SQL}) VIRTUAL`);
    }
    this.db.exec(`
      CREATE INDEX IF NOT EXISTS sessions_listing ON sessions (state, created_at, session_id);
      CREATE INDEX IF NOT EXISTS sessions_owner_listing ON sessions (owner, state, created_at, session_id);
    `);
  }

  /**
   * Journals of earlier layouts: a table clustered by (session, sequence), then a log without
   * `prev`, marks and directory. Both are rewritten once, in one transaction.
   */
  private migrate(): void {
    const layout = (this.db.prepare("SELECT value FROM meta WHERE key = 'layout'").get() as { value: number } | undefined)?.value;
    if (layout === 2) return;
    this.db.transaction(() => {
      const columns = this.db.prepare("PRAGMA table_info(journal)").all() as Array<{ name: string }>;
      if (!columns.some((c) => c.name === "prev")) this.db.exec("ALTER TABLE journal ADD COLUMN prev INTEGER");
      const old = this.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'records'").get();
      if (old !== undefined) {
        this.db.exec("INSERT INTO journal (session_id, sequence, at, type, data) SELECT session_id, sequence, at, type, data FROM records ORDER BY session_id, sequence; DROP TABLE records;");
      }
      const setPrev = this.db.prepare("UPDATE journal SET prev = ? WHERE id = ?");
      const mark = this.db.prepare("INSERT OR REPLACE INTO marks (session_id, sequence, id) VALUES (?, ?, ?)");
      const found = new Map<string, Entry>();
      for (const row of logRows(this.db, 0)) {
        let e = found.get(row.session_id);
        if (e === undefined) found.set(row.session_id, (e = { head: newHead(row.session_id), tail: 0, dirty: true, used: 0 }));
        if (e.tail !== 0) setPrev.run(e.tail, row.id);
        if (marked(row.sequence)) mark.run(row.session_id, row.sequence, row.id);
        e.tail = row.id;
        advanceHead(e.head, row);
      }
      const upsert = this.upsertDirectory();
      for (const e of found.values()) upsert(e);
      const lastId = (this.db.prepare("SELECT max(id) AS id FROM journal").get() as { id: number | null }).id ?? 0;
      this.db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('directory_through', ?), ('layout', 2)").run(lastId);
    })();
  }

  private upsertDirectory(): (e: Entry) => void {
    // A session's creation and owner never change: an update leaves them, and so the listing
    // indexes' entries, alone unless its state changed.
    const stmt = this.db.prepare(
      `INSERT INTO sessions (session_id, tail, created_at, last_sequence, activations, model_requests, open_calls, open_model_requests, turn_open, deleted, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (session_id) DO UPDATE SET tail = excluded.tail, last_sequence = excluded.last_sequence, activations = excluded.activations, model_requests = excluded.model_requests,
         open_calls = excluded.open_calls, open_model_requests = excluded.open_model_requests, turn_open = excluded.turn_open, deleted = excluded.deleted`,
    );
    return ({ head: h, tail }) => {
      stmt.run(h.sessionId, tail, h.createdAt, h.lastSequence, h.activations, h.modelRequests, h.openCalls, h.openModelRequests, h.turnOpen ? 1 : 0, h.deleted ? 1 : 0, h.owner ?? null);
    };
  }

  /** Brings the heads of sessions written after the directory's last write up to date (a crash lost at most a second of them). */
  private replayAfterDirectory(): void {
    const through = (this.db.prepare("SELECT value FROM meta WHERE key = 'directory_through'").get() as { value: number } | undefined)?.value ?? 0;
    for (const row of logRows(this.db, through)) {
      const e = this.entry(row.session_id) ?? { head: newHead(row.session_id), tail: 0, dirty: true, used: 0 };
      if (row.sequence <= e.head.lastSequence) continue; // already in the directory
      e.tail = row.id;
      e.dirty = true;
      advanceHead(e.head, row);
      this.entries.set(row.session_id, e);
    }
    this.writeDirectory();
  }

  /** Writes the changed heads and the rowid they are accurate through; drops heads nobody used lately. */
  private writeDirectory(): void {
    if (!this.db.open) return;
    // The directory's tails and `directory_through` name rows: they must be in the tables first.
    this.index();
    const dirty = [...this.entries.values()].filter((e) => e.dirty);
    if (dirty.length > 0) {
      const upsert = this.upsertDirectory();
      const meta = this.db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('directory_through', ?)");
      this.db.transaction(() => {
        for (const e of dirty) upsert(e);
        meta.run(this.lastId);
      })();
      for (const e of dirty) e.dirty = false;
    }
    this.generation += 1;
    for (const [id, e] of this.entries) if (!e.dirty && e.used < this.generation - 1) this.entries.delete(id);
  }

  /** The session's entry, from memory or the directory; undefined for a session never written. */
  private entry(sessionId: string): Entry | undefined {
    let e = this.entries.get(sessionId);
    if (e === undefined) {
      const row = this.selectDirectory.get(sessionId) as DirectoryRow | undefined;
      if (row === undefined) return undefined;
      this.stats.headsLoaded += 1;
      e = { head: headOf(row), tail: row.tail, dirty: false, used: this.generation };
      this.entries.set(sessionId, e);
    }
    e.used = this.generation;
    return e;
  }

  protected lastSequenceOf(sessionId: string): number {
    return this.entry(sessionId)?.head.lastSequence ?? 0;
  }

  protected commitBatch(records: JournalRecord[]): void {
    // Check the order and link each row to its session's previous one before writing anything, so
    // a bad batch writes nothing and changes nothing in memory (heads advance only after the commit).
    const firstId = this.lastId + 1;
    const prevs = new Array<number | null>(records.length);
    const tails = new Map<string, { sequence: number; tail: number }>();
    for (let i = 0; i < records.length; i++) {
      const r = records[i]!;
      let t = tails.get(r.sessionId);
      if (t === undefined) {
        const e = this.entry(r.sessionId);
        tails.set(r.sessionId, (t = { sequence: e?.head.lastSequence ?? 0, tail: e?.tail ?? 0 }));
      }
      if (r.sequence <= t.sequence) throw new BrainRuntimeError("internal", `journal: sequence ${r.sequence} of ${r.sessionId} is not after ${t.sequence}`);
      prevs[i] = t.tail === 0 ? null : t.tail;
      t.sequence = r.sequence;
      t.tail = firstId + i;
    }
    this.write(records, prevs, firstId);
    this.lastId = firstId + records.length - 1;
    for (let i = 0; i < records.length; i++) {
      const r = records[i]!;
      let e = this.entries.get(r.sessionId);
      if (e === undefined) this.entries.set(r.sessionId, (e = { head: newHead(r.sessionId), tail: 0, dirty: true, used: this.generation }));
      advanceHead(e.head, r);
      e.tail = firstId + i;
      e.dirty = true;
    }
  }

  /**
   * Commits the batch: one line appended to the log (durable when it returns), the rows written
   * into the tables INDEX_AFTER_MS later with whatever else was logged meanwhile.
   */
  private write(records: JournalRecord[], prevs: Array<number | null>, firstId: number): void {
    const rows = new Array<LoggedRow>(records.length);
    for (let i = 0; i < records.length; i++) {
      const r = records[i]!;
      rows[i] = { id: firstId + i, sessionId: r.sessionId, sequence: r.sequence, at: r.at, type: r.type, prev: prevs[i]!, data: JSON.stringify(r.data) };
    }
    this.log.append(rows);
    for (const r of rows) this.unindexed.push(r);
    if (this.unindexed.length >= INDEX_AT_ROWS) this.indexLater();
    // Unreferenced: the rows are durable in the log, and an exit before the timer fires only leaves them for the next open.
    else if (this.indexTimer === undefined) this.indexTimer = setTimeout(this.indexLater, INDEX_AFTER_MS).unref();
  }

  async read(sessionId: string, after = 0, through = Infinity): Promise<JournalRecord[]> {
    this.index();
    const e = this.entry(sessionId);
    if (e === undefined) return [];
    const last = e.head.lastSequence;
    const upto = Math.min(through, last);
    if (upto <= after) return [];
    let id: number | null = e.tail;
    if (upto < last) {
      const mark = this.selectMark.get(sessionId, upto) as { id: number } | undefined;
      if (mark !== undefined) id = mark.id;
    }
    const rows: Row[] = [];
    while (id !== null) {
      const row = this.selectRow.get(id) as Row | undefined;
      this.stats.rowsRead += 1;
      if (row === undefined || row.sequence <= after) break;
      if (row.sequence <= upto) rows.push(row);
      id = row.prev;
    }
    rows.reverse();
    return toRecords(rows);
  }

  async findMessage(sessionId: string, key: string): Promise<KeyedMessage | undefined> {
    this.index();
    const row = this.selectKeyed.get(sessionId, key) as { sequence: number; data: string } | undefined;
    if (row === undefined) return undefined;
    this.stats.rowsRead += 1;
    const data = JSON.parse(row.data) as { text: string; activation: number };
    return { sequence: row.sequence, activation: data.activation, text: data.text };
  }

  async head(sessionId: string): Promise<SessionHead | undefined> {
    const e = this.entry(sessionId);
    return e === undefined ? undefined : copyHead(e.head);
  }

  async openWork(): Promise<string[]> {
    const ids = new Set<string>();
    for (const e of this.entries.values()) if (hasOpenWork(e.head)) ids.add(e.head.sessionId);
    const rows = this.db.prepare("SELECT session_id FROM sessions WHERE deleted = 0 AND (open_calls > 0 OR open_model_requests > 0 OR turn_open = 1)").all() as Array<{ session_id: string }>;
    // The directory may be older than memory: a held entry decides.
    for (const r of rows) if (!this.entries.has(r.session_id)) ids.add(r.session_id);
    return [...ids];
  }

  /**
   * A page from the directory's listing indexes, one range per state wanted, merged with the heads
   * changed in memory since the directory's last write (they are newer than their rows, or have
   * none yet): a row of such a session is skipped and its memory head listed instead. What a page
   * visits is its rows (at most limit + 1 per state), the heads changed in the last second or two,
   * and one journal row per listed session (its session.created record, through its mark).
   */
  async listSessions(query: ListQuery): Promise<SessionPage> {
    this.index();
    const want = query.limit + 1;
    const changed = new Map<string, SessionHead>();
    for (const e of this.entries.values()) {
      const h = e.head;
      if (!e.dirty || (query.owner !== undefined && h.owner !== query.owner)) continue;
      if (query.after !== undefined && listingOrder(query.after, h) >= 0) continue;
      changed.set(h.sessionId, h);
    }
    this.stats.headsListed += changed.size;
    const found: SessionHead[] = [...changed.values()].filter((h) => query.status === undefined || headStatus(h) === query.status);
    for (const status of query.status === undefined ? STATUSES : [query.status]) {
      let after = query.after;
      let kept = 0;
      for (;;) {
        const params: Record<string, unknown> = { state: STATE[status], limit: want };
        if (query.owner !== undefined) params.owner = query.owner;
        if (after !== undefined) Object.assign(params, { createdAt: after.createdAt, sessionId: after.sessionId });
        const rows = this.listing(query.owner !== undefined, after !== undefined).all(params) as DirectoryRow[];
        this.stats.headsListed += rows.length;
        for (const r of rows) {
          if (changed.has(r.session_id)) continue;
          found.push(headOf(r));
          kept += 1;
        }
        // Rows of changed sessions were skipped: read on until this state has its share of the page.
        if (kept >= want || rows.length < want) break;
        const last = rows[rows.length - 1]!;
        after = { createdAt: last.created_at, sessionId: last.session_id };
      }
    }
    found.sort(listingOrder);
    const listed: ListedSession[] = [];
    for (const head of found) {
      if (listed.length === want) break;
      const created = this.createdOf(head.sessionId);
      if (created !== undefined) listed.push({ head: copyHead(head), created });
    }
    return pageOf(listed, query.limit);
  }

  /** The listing statement for a key's sessions or every session, from the start or after a position. */
  private listing(byOwner: boolean, after: boolean): Database.Statement {
    const key = `${byOwner} ${after}`;
    let stmt = this.listings.get(key);
    if (stmt === undefined) this.listings.set(key, (stmt = this.db.prepare(listingSql(byOwner, after))));
    return stmt;
  }

  /** A session's session.created data: its mark at sequence 1 names its row. */
  private createdOf(sessionId: string): SessionCreatedRecord["data"] | undefined {
    const mark = this.selectMark.get(sessionId, 1) as { id: number } | undefined;
    if (mark === undefined) return undefined;
    const row = this.selectRow.get(mark.id) as Row | undefined;
    this.stats.rowsRead += 1;
    return row?.sequence === 1 && row.type === "session.created" ? (JSON.parse(row.data) as SessionCreatedRecord["data"]) : undefined;
  }

  /** Every session id, deleted ones included, newest first: O(sessions), for tests and tools (listing pages with `listSessions`). */
  sessionIds(): string[] {
    const created = new Map<string, number>();
    for (const r of this.db.prepare("SELECT session_id, created_at FROM sessions").all() as Array<{ session_id: string; created_at: number }>) created.set(r.session_id, r.created_at);
    for (const e of this.entries.values()) created.set(e.head.sessionId, e.head.createdAt);
    return [...created].sort((a, b) => b[1] - a[1]).map(([id]) => id);
  }

  /** Hands checkpoints to a worker thread; if it cannot run, SQLite's automatic checkpoints take over again. */
  private startCheckpointer(): void {
    this.db.pragma("wal_autocheckpoint = 0");
    const worker = new Worker(CHECKPOINT_WORKER, { workerData: { file: this.file, intervalMs: CHECKPOINT_INTERVAL_MS, restartFrames: WAL_RESTART_FRAMES } });
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
    clearInterval(this.directoryTimer);
    let indexed = true;
    try {
      this.writeDirectory();
    } catch (e) {
      // The rows stay in the log: the next open writes them into the tables.
      indexed = false;
      this.logger?.error("journal: writing logged rows into SQLite failed at close; the next start replays the log", { error: e, rows: this.unindexed.length, file: this.file });
    }
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
    // The last connection's close checkpoints what is left (with an fsync) and removes the WAL: the
    // log's rows are then in the database file itself.
    this.db.close();
    this.log.close(indexed);
    this.lock.close();
  }

  async saveHost(row: HostRow): Promise<void> {
    this.db
      .prepare("INSERT INTO hosts (host_id, salt, hash, contracts, registered_at, owner) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(host_id) DO UPDATE SET contracts = excluded.contracts")
      .run(row.hostId, row.salt, row.hash, JSON.stringify(row.contracts), row.registeredAt, row.owner ?? null);
  }

  async deleteHost(hostId: string): Promise<void> {
    this.db.prepare("DELETE FROM hosts WHERE host_id = ?").run(hostId);
  }

  async loadHosts(): Promise<HostRow[]> {
    const rows = this.db.prepare("SELECT host_id, salt, hash, contracts, registered_at, owner FROM hosts").all() as Array<{ host_id: string; salt: string; hash: string; contracts: string; registered_at: number; owner: string | null }>;
    return rows.map((r) => ({ hostId: r.host_id, salt: r.salt, hash: r.hash, contracts: JSON.parse(r.contracts), registeredAt: r.registered_at, ...(r.owner === null ? {} : { owner: r.owner }) }));
  }

  async saveKey(row: KeyRow): Promise<void> {
    this.db
      .prepare("INSERT INTO keys (key_id, name, hash, created_at, revoked_at, limits) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(key_id) DO UPDATE SET revoked_at = coalesce(keys.revoked_at, excluded.revoked_at), limits = excluded.limits")
      .run(row.keyId, row.name, row.hash, row.createdAt, row.revokedAt ?? null, row.limits === undefined ? null : JSON.stringify(row.limits));
  }

  async loadKeys(): Promise<KeyRow[]> {
    const rows = this.db.prepare("SELECT key_id, name, hash, created_at, revoked_at, limits FROM keys").all() as Array<{ key_id: string; name: string; hash: string; created_at: number; revoked_at: number | null; limits: string | null }>;
    return rows.map((r) => ({ keyId: r.key_id, name: r.name, hash: r.hash, createdAt: r.created_at, ...(r.revoked_at === null ? {} : { revokedAt: r.revoked_at }), ...(r.limits === null ? {} : { limits: JSON.parse(r.limits) as KeyLimits }) }));
  }

  /**
   * The directory's count (the owner listing index) corrected by the heads changed in memory since
   * its last write: each such head counts as it is now, its directory row (if any) as it was.
   */
  async countOpenSessions(owner: string): Promise<number> {
    let n = (this.db.prepare("SELECT count(*) AS n FROM sessions WHERE owner = ? AND state <> 2").get(owner) as { n: number }).n;
    for (const e of this.entries.values()) {
      if (!e.dirty || e.head.owner !== owner) continue;
      const row = this.selectDirectory.get(e.head.sessionId) as DirectoryRow | undefined;
      if (row !== undefined && row.deleted === 0) n -= 1;
      if (!e.head.deleted && e.head.createdAt !== 0) n += 1;
    }
    return n;
  }

  /** Walks the session's own rows (its chain, as `read` does): the journal has no index by session to sum over. */
  async journalBytes(sessionId: string, through: number): Promise<number> {
    return dataBytes(await this.read(sessionId, 0, through));
  }
}

/**
 * Takes the journal's lock: an exclusive transaction on a small SQLite file of its own, held until
 * the store closes. It is an fcntl lock, so the kernel releases it when the process dies (kill -9
 * included) and no stale lock is ever left. A second process on the same data folder would write
 * its own rows over the first's and empty the log under it: it is refused here, before it reads
 * anything.
 */
function holdLock(path: string): Database.Database {
  const lock = new Database(path, { timeout: 0 });
  try {
    lock.pragma("journal_mode = DELETE");
    lock.exec("BEGIN EXCLUSIVE");
  } catch (e) {
    lock.close();
    if ((e as { code?: string }).code === "SQLITE_BUSY") throw new BrainRuntimeError("conflict", `the journal ${path.slice(0, -"-lock".length)} is in use by another process (one brain server per data folder)`, undefined, undefined, { cause: e });
    throw e;
  }
  return lock;
}

/** The directory's `state` column: what a head's status is, as SQL (journal/head.ts headStatus). */
const STATE_SQL = "CASE WHEN deleted = 1 THEN 2 WHEN turn_open = 1 THEN 1 ELSE 0 END";
const STATE: Record<HeadStatus, number> = { idle: 0, running: 1, deleted: 2 };
const STATUSES: HeadStatus[] = ["idle", "running", "deleted"];

/**
 * One state's range of a listing page, newest first (ties by id): an index range scan of
 * sessions_owner_listing (a key's sessions) or sessions_listing (every session), no sort.
 */
export function listingSql(byOwner: boolean, after: boolean): string {
  return `SELECT * FROM sessions WHERE ${byOwner ? "owner = @owner AND " : ""}state = @state${after ? " AND (created_at, session_id) < (@createdAt, @sessionId)" : ""}
    ORDER BY created_at DESC, session_id DESC LIMIT @limit`;
}

interface Row {
  session_id: string;
  sequence: number;
  at: number;
  type: string;
  data: string;
  prev: number | null;
}

interface LogRow {
  id: number;
  session_id: string;
  sequence: number;
  at: number;
  type: JournalRecord["type"];
  /** Only for session.created (heads keep its owner). */
  data?: unknown;
}

/**
 * The log's rows after rowid `after`, in pages (a statement cannot write while another iterates),
 * without their data but session.created's, which is all a head needs.
 */
function* logRows(db: Database.Database, after: number): Generator<LogRow> {
  const page = db.prepare("SELECT id, session_id, sequence, at, type, CASE type WHEN 'session.created' THEN data END AS data FROM journal WHERE id > ? ORDER BY id LIMIT 5000");
  for (let last = after; ; ) {
    const rows = page.all(last) as Array<LogRow & { data: string | null }>;
    if (rows.length === 0) return;
    for (const r of rows) yield r.data === null ? { ...r, data: undefined } : { ...r, data: JSON.parse(r.data) };
    last = rows[rows.length - 1]!.id;
  }
}

function headOf(row: DirectoryRow): SessionHead {
  return {
    sessionId: row.session_id,
    createdAt: row.created_at,
    lastSequence: row.last_sequence,
    activations: row.activations,
    modelRequests: row.model_requests,
    openCalls: row.open_calls,
    openModelRequests: row.open_model_requests,
    turnOpen: row.turn_open === 1,
    deleted: row.deleted === 1,
    ...(row.owner === null ? {} : { owner: row.owner }),
  };
}

function toRecords(rows: Row[]): JournalRecord[] {
  return rows.map((r) => ({ sessionId: r.session_id, sequence: r.sequence, at: r.at, type: r.type, data: JSON.parse(r.data) }) as JournalRecord);
}
