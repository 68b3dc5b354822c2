import type { JournalRecord, KeyLimits, SessionCreatedRecord, ToolContract } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";
import { outOfStep, outOfStepSessions } from "./out-of-step.ts";
import { deepFreeze } from "./freeze.ts";
import type { HeadStatus, SessionHead } from "./head.ts";

/** One persisted host registration: its identity, a salted hash of its secret and its contracts by digest. */
export interface HostRow {
  hostId: string;
  /** The API key it registered under; absent: the operator token. */
  owner?: string;
  salt: string;
  hash: string;
  contracts: ToolContract[];
  registeredAt: number;
}

/** One application API key: its id, the operator's label, SHA-256 of its secret, never the secret. */
export interface KeyRow {
  keyId: string;
  name: string;
  hash: string;
  createdAt: number;
  revokedAt?: number;
  /** The limits the operator set on this key itself (PATCH /v1/keys/:id); absent: the defaults apply. */
  limits?: KeyLimits;
}

/** Counters a test can read to check group commits and what reads touch. */
export interface StoreStats {
  transactions: number;
  records: number;
  /** Journal rows read back (every row a read visits, its session's or not). */
  rowsRead: number;
  /** Session heads read from storage (paging a session in, recovery). */
  headsLoaded: number;
  /** Session heads a listing visited (index rows and, on SQLite, heads changed in memory since the last directory write). */
  headsListed: number;
}

/** A place in the listing order (newest first, ties by id): a page starts after it. */
export interface ListPosition {
  createdAt: number;
  sessionId: string;
}

/** One page of sessions, in the listing order (journal/head.ts listingOrder). */
export interface ListQuery {
  /** Only the sessions this API key created; undefined: every session (what the operator sees). */
  owner?: string;
  /** Only sessions in this state, as their heads say (running: a turn open). */
  status?: HeadStatus;
  /** At least 1. */
  limit: number;
  /** Start after this position (the previous page's `next`). */
  after?: ListPosition;
}

export interface ListedSession {
  head: SessionHead;
  /** Its session.created record's data (model, tools, …), read for the listed rows only. */
  created: SessionCreatedRecord["data"];
}

export interface SessionPage {
  sessions: ListedSession[];
  /** Where the next page starts; absent on the last page. */
  next?: ListPosition;
}

/** A message.user record found by its idempotency key (JournalStore.findMessage). */
export interface KeyedMessage {
  sequence: number;
  activation: number;
  text: string;
}

/**
 * Records: append-only per session. `append` resolves only after the record's transaction
 * committed; the appends made in one event-loop tick go into one transaction (group commit), in
 * the order of the calls. (PostgreSQL may deal a large tick's sessions out between two
 * transactions committed side by side; a session's records are never split or reordered.) A record
 * is deep-frozen when appended: committed history is immutable, so it is shared, never copied.
 *
 * Every read is asynchronous, so a store whose reads cross a network (PostgreSQL) serves them as
 * they are, without copies in memory. Reads go by session: `read` visits only that session's rows,
 * and `head` answers what a session needs to page back in without reading its records; nothing is
 * held in memory per session beyond what a store needs for the sessions being written.
 */
export interface RecordStore {
  readonly kind: "sqlite" | "memory" | "postgres";
  readonly stats: StoreStats;
  /**
   * Resolves with `record` once its transaction committed. `onCommit`, when given, is called with
   * it at the commit, before anything awaiting the promise runs (a throw there rejects the append),
   * so a caller that must see every commit first (SessionState) needs no promise chained on each record.
   */
  append(record: JournalRecord, onCommit?: CommitHook): Promise<JournalRecord>;
  /** Committed records of one session with `after < sequence <= through`, in sequence order. */
  read(sessionId: string, after?: number, through?: number): Promise<JournalRecord[]>;
  /** The session's head as of its last committed record; undefined for a session never written. */
  head(sessionId: string): Promise<SessionHead | undefined>;
  /**
   * The committed message.user record of the session that carries this idempotency key, if any
   * (records admitted and not committed yet are not found). Reads one index entry, never the session's records.
   */
  findMessage(sessionId: string, key: string): Promise<KeyedMessage | undefined>;
  /** Ids of the sessions with open work (open calls, open model requests, a running turn): what recovery reads. */
  openWork(): Promise<string[]>;
  /**
   * One page of sessions, newest first, from an index keyed by owner, state and creation: a page
   * costs the same however many sessions the journal holds. A session is listed from the moment its
   * session.created commit is acknowledged, and with its state as of its last acknowledged commit.
   */
  listSessions(query: ListQuery): Promise<SessionPage>;
  /**
   * Sessions `owner` (an API key) has open: created (session.created committed) and not deleted, as
   * of the last acknowledged commits (a key's sessions-open limit; all nodes' on PostgreSQL).
   */
  countOpenSessions(owner: string): Promise<number>;
  /**
   * UTF-8 bytes of the `data` of one session's committed records with sequence <= `through`, as
   * stored (compact JSON): what a session-journal-bytes limit counts. Reads only that session's rows.
   */
  journalBytes(sessionId: string, through: number): Promise<number>;
  /** Resolves once everything appended so far is committed. */
  flush(): Promise<void>;
  /**
   * Optional: calls `observer` after every group commit, committed or failed (telemetry: its
   * duration, its size, its span). `startedAt` is performance.now() when the commit began.
   */
  observeCommits?(observer: CommitObserver): void;
  close(): Promise<void>;
}

/**
 * The registry: host registrations and API keys. Small, read whole at start and again when a
 * request names one this process does not know (credentials/keys.ts, hosts/registry.ts keep them
 * in memory); a write resolves once it is durable.
 */
export interface RegistryStore {
  saveHost(row: HostRow): Promise<void>;
  /** Removes a host's registration (a Brain-managed host whose binding ended); nothing for an unknown id. */
  deleteHost(hostId: string): Promise<void>;
  loadHosts(): Promise<HostRow[]>;
  saveKey(row: KeyRow): Promise<void>;
  loadKeys(): Promise<KeyRow[]>;
}

/** What the runtime is given to keep: one database serving both interfaces. */
export interface JournalStore extends RecordStore, RegistryStore {}

/**
 * The page of `limit` sessions out of `found`, which is in the listing order and holds one more
 * session when more follow (so the last page has no `next`).
 */
export function pageOf(found: ListedSession[], limit: number): SessionPage {
  if (found.length <= limit) return { sessions: found };
  const sessions = found.slice(0, limit);
  const last = sessions[sessions.length - 1]!.head;
  return { sessions, next: { createdAt: last.createdAt, sessionId: last.sessionId } };
}

const resolved = Promise.resolve();

/**
 * Runs `fn` as a microtask, queued where queueMicrotask would queue it. Node's queueMicrotask wraps
 * every callback in an AsyncResource (an async id, a bound function, a scope to enter): two per
 * sequential call here, on the call path. These callbacks do not throw (a throw would still end
 * the process, as an unhandled rejection instead of an uncaught exception).
 */
function microtask(fn: () => void): void {
  void resolved.then(fn);
}

/** Told of each group commit: its records, when it began (performance.now()), how long it took, and its error if it failed. */
export type CommitObserver = (records: readonly JournalRecord[], startedAt: number, seconds: number, error?: unknown) => void;

/** Called with a record at its commit (RecordStore.append). */
export type CommitHook = (record: JournalRecord) => void;

/** A record appended and not yet committed: its append's promise, and the caller's hook. */
export interface PendingRecord {
  record: JournalRecord;
  resolve: (record: JournalRecord) => void;
  reject: (e: unknown) => void;
  onCommit: CommitHook | undefined;
}

/** A committed record's append settles: its hook first (a throw there rejects the append, as a throwing reaction to it would have), then its promise. */
export function settleCommitted(p: PendingRecord): void {
  if (p.onCommit !== undefined) {
    try {
      p.onCommit(p.record);
    } catch (e) {
      return p.reject(e);
    }
  }
  p.resolve(p.record);
}

/**
 * Group commit shared by both stores: queue the tick's appends, commit them together on setImmediate.
 *
 * One exception keeps a commit's own consequences from waiting a whole turn of the event loop: the
 * appends made while a commit's waiters run (its promise continuations: a call's intent appended
 * because the previous call's finish was observed, an Agentloop step) are committed together in one
 * more transaction as soon as those continuations have run, once per setImmediate commit of one
 * session's records. A
 * setImmediate queued there would first poll for I/O (reading, among others, the `committed` frame
 * the same commit just sent), so a sequential call paid a loop turn and a separate socket write
 * before its intent was even committed. Appends made in I/O callbacks keep the setImmediate window.
 */
export abstract class BatchingStore implements JournalStore {
  abstract readonly kind: "sqlite" | "memory";
  readonly stats: StoreStats = { transactions: 0, records: 0, rowsRead: 0, headsLoaded: 0, headsListed: 0 };
  private pending: PendingRecord[] = [];
  private scheduled: NodeJS.Immediate | undefined;
  /** A setImmediate commit's waiters are running: the first append among them queues the follow-up commit. */
  private settling = false;
  /** The follow-up commit is queued (a microtask). */
  private following = false;
  private flushed: Array<() => void> = [];
  protected closed = false;
  private observer: CommitObserver | undefined;

  observeCommits(observer: CommitObserver): void {
    this.observer = observer;
  }

  append(record: JournalRecord, onCommit?: CommitHook): Promise<JournalRecord> {
    if (this.closed) return Promise.reject(new BrainRuntimeError("unavailable", "the journal is closed: the runtime is shutting down", undefined, true));
    deepFreeze(record);
    return new Promise((resolve, reject) => {
      this.pending.push({ record, resolve, reject, onCommit });
      if (this.scheduled !== undefined || this.following) return;
      if (this.settling) {
        // Queued behind the continuations already running, so the ones that append next join it.
        this.settling = false;
        this.following = true;
        microtask(this.commitFollowing);
        return;
      }
      // setImmediate runs after the current I/O phase, so every append of this tick joins the batch.
      this.scheduled = setImmediate(this.commitScheduled);
    });
  }

  protected readonly lastSequence = (sessionId: string): number => this.lastSequenceOf(sessionId);

  private readonly commitScheduled = (): void => {
    this.scheduled = undefined;
    // Only after a commit of one session's records (a lone call in flight): with several sessions
    // in flight a loop turn is shared by all of them, and their next records are better batched
    // with the frames that turn reads (a follow-up commit each time halved the batches at 64
    // sessions and cost a sixth of the calls/s).
    if (!this.oneSession()) return this.commitPending();
    // Until the microtasks this commit sets off have run (a tick queued from a microtask runs after them).
    this.settling = true;
    microtask(this.endSettlingSoon);
    this.commitPending();
  };

  /** The pending records are all one session's. */
  private oneSession(): boolean {
    const p = this.pending;
    const first = p[0]?.record.sessionId;
    for (let i = 1; i < p.length; i++) if (p[i]!.record.sessionId !== first) return false;
    return true;
  }

  private readonly endSettlingSoon = (): void => void process.nextTick(this.endSettling);
  private readonly endSettling = (): void => void (this.settling = false);

  private readonly commitFollowing = (): void => {
    this.following = false;
    // Appends left for later in this tick go to a setImmediate commit: never a chain of microtask commits.
    this.settling = false;
    if (this.scheduled === undefined) this.commitPending();
  };

  private commitPending(): void {
    let batch = this.pending;
    this.pending = [];
    let records = new Array<JournalRecord>(batch.length);
    for (let i = 0; i < batch.length; i++) records[i] = batch[i]!.record;
    const stale = outOfStepSessions(records, this.lastSequence);
    if (stale.size > 0) {
      for (const p of batch) if (stale.has(p.record.sessionId)) p.reject(outOfStep(p.record));
      batch = batch.filter((p) => !stale.has(p.record.sessionId));
      records = batch.map((p) => p.record);
    }
    if (batch.length > 0) {
      const startedAt = performance.now();
      try {
        this.commitBatch(records);
        this.stats.transactions += 1;
        this.stats.records += batch.length;
        this.observer?.(records, startedAt, (performance.now() - startedAt) / 1000);
        for (const p of batch) settleCommitted(p);
      } catch (e) {
        this.observer?.(records, startedAt, (performance.now() - startedAt) / 1000, e);
        for (const p of batch) p.reject(e);
      }
    }
    const waiters = this.flushed;
    this.flushed = [];
    for (const w of waiters) w();
  }

  /** Resolves once everything appended so far is committed. */
  flush(): Promise<void> {
    if (this.pending.length === 0 && this.scheduled === undefined && !this.following) return Promise.resolve();
    return new Promise((resolve) => this.flushed.push(resolve));
  }

  async close(): Promise<void> {
    if (this.scheduled !== undefined) {
      clearImmediate(this.scheduled);
      this.scheduled = undefined;
      this.commitPending();
    } else if (this.following) this.commitPending();
    this.closed = true;
    await this.closeStorage();
  }

  /** Commit all records in one transaction, or throw having committed none. */
  protected abstract commitBatch(records: JournalRecord[]): void;
  /** A session's last committed sequence (0: none yet): a batch's records of it must follow it one by one. */
  protected abstract lastSequenceOf(sessionId: string): number;
  protected abstract closeStorage(): void | Promise<void>;
  abstract read(sessionId: string, after?: number, through?: number): Promise<JournalRecord[]>;
  abstract head(sessionId: string): Promise<SessionHead | undefined>;
  abstract findMessage(sessionId: string, key: string): Promise<KeyedMessage | undefined>;
  abstract openWork(): Promise<string[]>;
  abstract listSessions(query: ListQuery): Promise<SessionPage>;
  abstract countOpenSessions(owner: string): Promise<number>;
  abstract journalBytes(sessionId: string, through: number): Promise<number>;
  abstract saveHost(row: HostRow): Promise<void>;
  abstract deleteHost(hostId: string): Promise<void>;
  abstract loadHosts(): Promise<HostRow[]>;
  abstract saveKey(row: KeyRow): Promise<void>;
  abstract loadKeys(): Promise<KeyRow[]>;
}

/** UTF-8 bytes of the records' `data` as compact JSON: what a store holds of each, and what a session's journal-bytes limit counts. */
export function dataBytes(records: readonly JournalRecord[]): number {
  let n = 0;
  for (const r of records) n += Buffer.byteLength(JSON.stringify(r.data), "utf8");
  return n;
}
