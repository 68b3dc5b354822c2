import type { JournalRecord, SessionCreatedRecord, Session } from "@aexhq/brain-protocol";
import type { JournalStore, KeyedMessage } from "./store.ts";
import { dataBytes } from "./store.ts";
import { limitExceeded } from "../limits/key-limits.ts";
import type { SessionHead } from "./head.ts";
import { headStatus } from "./head.ts";
import { BrainRuntimeError } from "../errors.ts";
import type { Redactor } from "../redact.ts";
import { parseCallId } from "./call-id.ts";
import { JournalRules } from "./journal-rules.js";

type RecordOf<T extends JournalRecord["type"]> = Extract<JournalRecord, { type: T }>;
export type RecordData<T extends JournalRecord["type"]> = RecordOf<T>["data"];

/**
 * One session's journal as the runtime sees it. Sequences are allocated synchronously when a
 * record is admitted, so admission order is journal order; readers (HTTP, SSE, the Agentloop) see
 * committed records only. The records themselves are the store's: this object holds what running
 * the session needs (counters, open calls and model requests), a small constant beyond its open
 * work, and reads records back through the store, which visits only this session's rows.
 */
export class SessionState {
  private seq: number;
  private committedThrough: number;
  /** Admitted (not necessarily committed) state: stops appends after session.deleted. */
  deletedAdmitted = false;
  /** Set when this process stopped running the session (stopWriting): nothing more of this run is written. */
  private stoppedWith: Error | undefined;
  /** Activation count (message.user records admitted). */
  activation = 0;
  /**
   * What is open and what the model has not seen, by the journal's rules (journal-rules.js, the
   * module the /ui page folds records with too).
   */
  readonly rules = new JournalRules();
  /** Open calls: a tool.call_started without its tool.finished. */
  get openCalls(): ReadonlySet<string> {
    return this.rules.openCalls;
  }
  /** Open calls that await an approval: a tool.call_started with `approval`, no decision or end yet. */
  get pendingApprovals(): ReadonlySet<string> {
    return this.rules.pendingApprovals;
  }
  /**
   * Sequence of the latest committed observation: a tool.result, or a tool.finished that tells the
   * model something new (not `ok`, or completion without any result). The Agentloop compares it
   * with what it already fed the model.
   */
  get lastObservation(): number {
    return this.rules.lastObservation;
  }
  /** model.request records admitted: the next one's index among the session's model calls (the scripted provider's step). */
  private modelRequestCount = 0;
  /** Sequences of committed model.request records without a committed model.response (recovery answers them `unknown`). */
  readonly pendingModelRequests = new Set<number>();
  private deletedCommitted = false;
  /**
   * Idempotency keys of message.user records admitted and not committed yet (SessionManager.send):
   * a request with the same key finds its first here until the store can (findMessage reads commits).
   */
  readonly keysInFlight = new Map<string, KeyedMessage & { committed: Promise<unknown> }>();
  private listeners = new Set<(r: JournalRecord) => void>();
  private redactor: Redactor | undefined;
  /**
   * The session's journal bytes (the `data` of its records as stored), counted once its key has a
   * journal-bytes limit: `base` is the store's sum through `through` (undefined while it is read),
   * `since` what was committed after that. Sessions of unlimited keys never count.
   */
  private bytes: { base: number | undefined; since: number; through: number } | undefined;
  private bytesLoading: Promise<void> | undefined;
  /** The journal-bytes limit of the key that owns this session, asked at each check (the operator may change it). */
  private bytesLimit: (() => number | undefined) | undefined;

  private constructor(
    readonly id: string,
    readonly created: SessionCreatedRecord["data"],
    readonly createdAt: number,
    private store: JournalStore,
  ) {
    this.seq = 1;
    this.committedThrough = 0;
  }

  /** A new session: nothing journaled yet (its session.created is the first append). */
  static create(id: string, created: SessionCreatedRecord["data"], store: JournalStore): SessionState {
    return new SessionState(id, created, Date.now(), store);
  }

  /** A session without open work paged back in from its head: no record is read but its session.created. */
  static fromHead(head: SessionHead, created: SessionCreatedRecord["data"], store: JournalStore): SessionState {
    const s = new SessionState(head.sessionId, created, head.createdAt, store);
    s.seq = head.lastSequence + 1;
    s.committedThrough = head.lastSequence;
    s.activation = head.activations;
    s.modelRequestCount = head.modelRequests;
    s.deletedAdmitted = s.deletedCommitted = head.deleted;
    return s;
  }

  /** A session rebuilt from all its records (recovery of a session with open work). */
  static fromRecords(id: string, records: JournalRecord[], store: JournalStore): SessionState {
    const first = records[0];
    if (first?.type !== "session.created") throw new BrainRuntimeError("internal", `session ${id} has no session.created record`);
    const s = new SessionState(id, first.data, first.at, store);
    for (const r of records) {
      s.observe(r);
      if (r.type === "message.user") s.activation += 1;
      else if (r.type === "model.request") s.modelRequestCount += 1;
    }
    s.seq = s.committedThrough + 1;
    s.deletedAdmitted = s.deletedCommitted;
    return s;
  }

  /** Every record this session appends is first cleared of the server's secrets. */
  redactWith(redactor: Redactor): void {
    this.redactor = redactor;
  }

  /** `value` without the server's secrets (see Redactor). */
  redact<T>(value: T): T {
    return this.redactor === undefined ? value : this.redactor.redact(value);
  }

  /** The sequence the next admitted record gets. */
  get nextSequence(): number {
    return this.seq;
  }

  /** The last committed sequence (what readers see). */
  get lastSequence(): number {
    return this.committedThrough;
  }

  /** Whether anything is admitted and not yet committed. */
  get quiet(): boolean {
    return this.seq === this.committedThrough + 1;
  }

  /** Whether someone follows its commits (an SSE stream): such a session is not paged out. */
  get watched(): boolean {
    return this.listeners.size > 0;
  }

  /**
   * Admits a model.request; `index` counts the session's model calls in admission order, the
   * Agentloop's and its tools' alike (the scripted model answers step `index`). A request that was
   * admitted but never answered (a crash) keeps its index: it is never replayed.
   */
  admitModelRequest(data: RecordData<"model.request">): { index: number; sequence: number; committed: Promise<unknown> } {
    const index = this.modelRequestCount;
    const r = this.append("model.request", data);
    this.modelRequestCount += 1;
    return { index, ...r };
  }

  get deleted(): boolean {
    return this.deletedCommitted;
  }

  /** The committed tool.call_started of `callId` in this session, if any (its sequence is in the callId). */
  async callStarted(callId: string): Promise<Extract<JournalRecord, { type: "tool.call_started" }> | undefined> {
    const id = parseCallId(callId);
    if (id === undefined || id.sessionId !== this.id || id.sequence > this.committedThrough) return undefined;
    const seq = id.sequence;
    const r = (await this.store.read(this.id, seq - 1, seq))[0];
    return r?.type === "tool.call_started" && r.data.callId === callId ? r : undefined;
  }

  /** Admit a record now (its sequence is final) and resolve with it once durably committed. */
  append<T extends JournalRecord["type"]>(type: T, data: RecordData<T>): { sequence: number; committed: Promise<RecordOf<T>> } {
    if (this.deletedAdmitted) throw new BrainRuntimeError("conflict", `session ${this.id} is deleted`);
    if (this.stoppedWith !== undefined) {
      const refused = Promise.reject(this.stoppedWith);
      refused.catch(() => {
        // Handled as a failed commit is: whoever awaits `committed` sees it.
      });
      return { sequence: this.seq, committed: refused };
    }
    if (type === "session.deleted") this.deletedAdmitted = true;
    // session.created carries the creation time the session shows (its view and its listing order agree).
    // Redacted and frozen in one walk (the store's freeze then finds the data frozen).
    const clean = this.redactor?.redactFrozen(data) ?? data;
    const record = { sessionId: this.id, sequence: this.seq++, at: type === "session.created" ? this.createdAt : Date.now(), type, data: clean } as unknown as RecordOf<T>;
    // The session's view advances at the commit itself (observe, the store's hook), before anything
    // awaiting `committed` runs: no promise chained on every record for it.
    const committed = this.store.append(record, this.observed) as Promise<RecordOf<T>>;
    // Handled: whoever awaits `committed` sees the failure (ToolCall logs its own records'); this
    // only keeps a fire-and-forget append from becoming an unhandled rejection (e.g. at shutdown).
    committed.catch(handled);
    return { sequence: record.sequence, committed };
  }

  /**
   * This process stopped running the session (another node holds its lease now, or a write failed
   * and it will be read afresh): whatever of this run still tries to write (a model call or a tool
   * that was in flight) is refused here. Sent to the store, it would be written under the lease
   * the node holds when it arrives, which may be a later run's of the same session.
   */
  stopWriting(reason: Error): void {
    this.stoppedWith ??= reason;
  }

  /**
   * Limits this session's journal bytes with `limit` (read at each check). The count is read from
   * the store (every node's writes of it before this node took it) and kept up to date at each commit.
   */
  limitBytes(limit: () => number | undefined): void {
    this.bytesLimit = limit;
    if (limit() !== undefined) void this.journalBytesReady();
  }

  /**
   * Once the journal-bytes count is known (read from the store the first time): a promise while it
   * is read, undefined when there is nothing to wait for (known already, or the session is not limited),
   * so a caller that need not wait keeps acting in the same tick.
   */
  journalBytesReady(): Promise<void> | undefined {
    if (this.bytesLimit?.() === undefined) return undefined;
    if (this.bytes === undefined) {
      const through = this.committedThrough;
      const counted: { base: number | undefined; since: number; through: number } = { base: through === 0 ? 0 : undefined, since: 0, through };
      this.bytes = counted;
      if (counted.base === undefined) {
        this.bytesLoading = this.store.journalBytes(this.id, through).then(
          (n) => void (counted.base = n),
          // A failed read is tried again at the next check; meanwhile nothing is refused.
          () => void (this.bytes === counted && (this.bytes = undefined)),
        ).finally(() => (this.bytesLoading = undefined));
      }
    }
    return this.bytesLoading;
  }

  /**
   * Throws `limit_exceeded` when the session's journal holds its key's journal-bytes limit or more
   * (`what` is refused: a message, an emit). Synchronous: a count still being read refuses nothing.
   */
  checkJournalBytes(what: string): void {
    const max = this.bytesLimit?.();
    if (max === undefined) return;
    if (this.bytes === undefined) return void this.journalBytesReady();
    if (this.bytes.base === undefined) return;
    const current = this.bytes.base + this.bytes.since;
    if (current >= max) throw limitExceeded("journalBytes", max, current, `${what} (session ${this.id})`);
  }

  /** Called for every committed record, in order. */
  onCommit(listener: (r: JournalRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Committed records with `after < sequence <= through`, in order, read from the store. */
  after(sequence: number, through = this.committedThrough): Promise<JournalRecord[]> {
    return this.store.read(this.id, sequence, Math.min(through, this.committedThrough));
  }

  private readonly observed = (r: JournalRecord): void => this.observe(r);

  private observe(r: JournalRecord): void {
    this.committedThrough = r.sequence;
    if (this.bytes !== undefined && r.sequence > this.bytes.through) this.bytes.since += dataBytes([r]);
    this.rules.observe(r);
    if (r.type === "model.request") this.pendingModelRequests.add(r.sequence);
    else if (r.type === "model.response") {
      // Responses without `request` come from journals written before it existed: they answer the oldest open request.
      const answered = r.data.request ?? this.pendingModelRequests.values().next().value;
      if (answered !== undefined) this.pendingModelRequests.delete(answered);
    } else if (r.type === "session.deleted") this.deletedCommitted = true;
    for (const l of this.listeners) l(r);
  }

  view(running: boolean): Session {
    return sessionView(this.id, this.createdAt, this.created, { status: this.deleted ? "deleted" : running ? "running" : "idle", lastSequence: this.lastSequence, openCalls: [...this.openCalls], pendingApprovals: [...this.pendingApprovals] });
  }
}

/** A rejection someone else sees (one function for every append, not a closure each). */
const handled = (): void => undefined;

/** A session as GET answers it, for a live session or one known only by its head. */
export function sessionView(id: string, createdAt: number, created: SessionCreatedRecord["data"], now: Pick<Session, "status" | "lastSequence" | "openCalls" | "pendingApprovals">): Session {
  const s: Session = { id, createdAt: new Date(createdAt).toISOString(), status: now.status, model: created.model, tools: created.tools, lastSequence: now.lastSequence, openCalls: now.openCalls, pendingApprovals: now.pendingApprovals };
  if (created.system !== undefined) s.system = created.system;
  if (created.deadlineMs !== undefined) s.deadlineMs = created.deadlineMs;
  return s;
}

/**
 * The view of a session that is not resident here, from its head: its status as committed (a turn
 * open on another node is `running`) and no open calls or pending approvals (those are its resident
 * runner's to show).
 */
export function headView(head: SessionHead, created: SessionCreatedRecord["data"]): Session {
  return sessionView(head.sessionId, head.createdAt, created, { status: headStatus(head), lastSequence: head.lastSequence, openCalls: [], pendingApprovals: [] });
}
