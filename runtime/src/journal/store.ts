import type { JournalRecord, ToolContract } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";
import { deepFreeze } from "./freeze.ts";

/** One persisted host registration: its identity, a salted hash of its secret and its contracts by digest. */
export interface HostRow {
  hostId: string;
  salt: string;
  hash: string;
  contracts: ToolContract[];
  registeredAt: number;
}

/** Counters a test can read to check group commits. */
export interface StoreStats {
  transactions: number;
  records: number;
}

/**
 * The journal store: append-only records per session plus the host registry.
 * `append` resolves only after the record's transaction committed; every append made in one
 * event-loop tick goes into one transaction (group commit), in the order of the calls. A record
 * is deep-frozen when appended: committed history is immutable, so it is shared, never copied.
 */
export interface JournalStore {
  readonly kind: "sqlite" | "memory";
  readonly stats: StoreStats;
  append(record: JournalRecord): Promise<void>;
  /** Every committed record, grouped by session, in sequence order (recovery). */
  loadRecords(): JournalRecord[];
  /** The committed records of one session in sequence order (readers of a session the runtime forgot). */
  loadSession(sessionId: string): JournalRecord[];
  /** The runtime no longer keeps this (deleted) session in memory; the store may compact it. */
  forget(sessionId: string): void;
  saveHost(row: HostRow): void;
  loadHosts(): HostRow[];
  flush(): Promise<void>;
  close(): Promise<void>;
}

interface Pending {
  record: JournalRecord;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** Group commit shared by both stores: queue the tick's appends, commit them together on setImmediate. */
export abstract class BatchingStore implements JournalStore {
  abstract readonly kind: "sqlite" | "memory";
  readonly stats: StoreStats = { transactions: 0, records: 0 };
  private pending: Pending[] = [];
  private scheduled: NodeJS.Immediate | undefined;
  private flushed: Array<() => void> = [];
  protected closed = false;

  append(record: JournalRecord): Promise<void> {
    if (this.closed) return Promise.reject(new BrainRuntimeError("internal", "the journal is closed"));
    deepFreeze(record);
    return new Promise((resolve, reject) => {
      this.pending.push({ record, resolve, reject });
      // setImmediate runs after the current I/O phase, so every append of this tick joins the batch.
      this.scheduled ??= setImmediate(() => this.commitPending());
    });
  }

  private commitPending(): void {
    this.scheduled = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length > 0) {
      try {
        this.commitBatch(batch.map((p) => p.record));
        this.stats.transactions += 1;
        this.stats.records += batch.length;
        for (const p of batch) p.resolve();
      } catch (e) {
        for (const p of batch) p.reject(e);
      }
    }
    const waiters = this.flushed;
    this.flushed = [];
    for (const w of waiters) w();
  }

  /** Resolves once everything appended so far is committed. */
  flush(): Promise<void> {
    if (this.pending.length === 0 && this.scheduled === undefined) return Promise.resolve();
    return new Promise((resolve) => this.flushed.push(resolve));
  }

  async close(): Promise<void> {
    if (this.scheduled !== undefined) {
      clearImmediate(this.scheduled);
      this.commitPending();
    }
    this.closed = true;
    await this.closeStorage();
  }

  /** Commit all records in one transaction, or throw having committed none. */
  protected abstract commitBatch(records: JournalRecord[]): void;
  protected abstract closeStorage(): void | Promise<void>;
  abstract loadRecords(): JournalRecord[];
  abstract loadSession(sessionId: string): JournalRecord[];
  abstract forget(sessionId: string): void;
  abstract saveHost(row: HostRow): void;
  abstract loadHosts(): HostRow[];
}
