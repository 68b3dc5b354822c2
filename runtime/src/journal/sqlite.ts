import Database from "better-sqlite3";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { BatchingStore } from "./store.ts";
import type { HostRow } from "./store.ts";

/**
 * SQLite journal (better-sqlite3, WAL, synchronous=NORMAL). WAL+NORMAL survives a process kill
 * (the WAL is written before commit returns); only an OS crash may lose the last transactions.
 */
export class SqliteStore extends BatchingStore {
  readonly kind = "sqlite" as const;
  readonly db: Database.Database;
  private insert: Database.Statement;
  private commitMany: (records: JournalRecord[]) => void;
  private selectSession: Database.Statement;

  constructor(readonly file: string) {
    super();
    this.db = new Database(file);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = NORMAL");
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS records (
        session_id TEXT NOT NULL,
        sequence INTEGER NOT NULL,
        at INTEGER NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (session_id, sequence)
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS hosts (
        host_id TEXT PRIMARY KEY,
        salt TEXT NOT NULL,
        hash TEXT NOT NULL,
        contracts TEXT NOT NULL,
        registered_at INTEGER NOT NULL
      );
    `);
    this.insert = this.db.prepare("INSERT INTO records (session_id, sequence, at, type, data) VALUES (?, ?, ?, ?, ?)");
    this.selectSession = this.db.prepare("SELECT session_id, sequence, at, type, data FROM records WHERE session_id = ? ORDER BY sequence");
    this.commitMany = this.db.transaction((records: JournalRecord[]) => {
      for (const r of records) this.insert.run(r.sessionId, r.sequence, r.at, r.type, JSON.stringify(r.data));
    });
  }

  protected commitBatch(records: JournalRecord[]): void {
    this.commitMany(records);
  }

  protected closeStorage(): void {
    this.db.close();
  }

  loadRecords(): JournalRecord[] {
    return toRecords(this.db.prepare("SELECT session_id, sequence, at, type, data FROM records ORDER BY session_id, sequence").all() as Row[]);
  }

  loadSession(sessionId: string): JournalRecord[] {
    return toRecords(this.selectSession.all(sessionId) as Row[]);
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
