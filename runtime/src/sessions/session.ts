import type { JournalRecord, SessionCreatedRecord, Session } from "@aexhq/brain-protocol";
import type { JournalStore } from "../journal/store.ts";
import { BrainRuntimeError } from "../errors.ts";

type RecordOf<T extends JournalRecord["type"]> = Extract<JournalRecord, { type: T }>;
export type RecordData<T extends JournalRecord["type"]> = RecordOf<T>["data"];

/**
 * One session's journal as the runtime sees it. Sequences are allocated synchronously when a
 * record is admitted, so admission order is journal order; `records` holds only committed ones,
 * which is all that readers (HTTP, SSE, the Agentloop) ever see.
 */
export class SessionState {
  readonly records: JournalRecord[] = [];
  private seq: number;
  /** Admitted (not necessarily committed) state: stops appends after session.deleted. */
  deletedAdmitted = false;
  /** Activation count (message.user records admitted). */
  activation = 0;
  readonly openCalls = new Set<string>();
  /** Open calls that have a committed tool.result. */
  private withResult = new Set<string>();
  /**
   * Sequences of tool.finished records that tell the model something new: not `ok`, or completion
   * without any result. Numbers, not a WeakSet of the records: a WeakSet entry is an ephemeron the
   * collector processes on every major GC, for the session's whole life.
   */
  private observations = new Set<number>();
  /** model.request records admitted: the next one's index among the session's model calls (the scripted provider's step). */
  private modelRequestCount = 0;
  /** Sequences of committed model.request records without a committed model.response (recovery answers them `unknown`). */
  readonly pendingModelRequests = new Set<number>();
  private deletedCommitted = false;
  private listeners = new Set<(r: JournalRecord) => void>();

  constructor(
    readonly id: string,
    readonly created: SessionCreatedRecord["data"],
    readonly createdAt: number,
    private store: JournalStore,
    existing: JournalRecord[] = [],
  ) {
    for (const r of existing) this.observe(r);
    this.seq = existing.length + 1;
    this.activation = existing.filter((r) => r.type === "message.user").length;
    this.modelRequestCount = existing.filter((r) => r.type === "model.request").length;
    this.deletedAdmitted = existing.some((r) => r.type === "session.deleted");
  }

  /** The sequence the next admitted record gets. */
  get nextSequence(): number {
    return this.seq;
  }

  get lastSequence(): number {
    return this.records.length === 0 ? 0 : this.records[this.records.length - 1]!.sequence;
  }

  /**
   * Admits a model.request; `index` counts the session's model calls in admission order, the
   * Agentloop's and its tools' alike (the scripted model answers step `index`). A request that was
   * admitted but never answered (a crash) keeps its index: it is never replayed.
   */
  admitModelRequest(request: RecordData<"model.request">["request"], origin?: string): { index: number; sequence: number; committed: Promise<unknown> } {
    const index = this.modelRequestCount;
    const r = this.append("model.request", origin === undefined ? { request } : { request, origin });
    this.modelRequestCount += 1;
    return { index, ...r };
  }

  get deleted(): boolean {
    return this.deletedCommitted;
  }

  /** Whether a committed tool.finished is an observation for the Agentloop (a failure, or a finish without any result). */
  isObservation(r: JournalRecord): boolean {
    return r.type === "tool.finished" && this.observations.has(r.sequence);
  }

  /** The committed tool.call_started of `callId` in this session, if any (sequences index the records). */
  callStarted(callId: string): Extract<JournalRecord, { type: "tool.call_started" }> | undefined {
    if (!callId.startsWith(`${this.id}:`)) return undefined;
    const r = this.records[Number(callId.slice(this.id.length + 1)) - 1];
    return r?.type === "tool.call_started" && r.data.callId === callId ? r : undefined;
  }

  /** Admit a record now (its sequence is final) and resolve with it once durably committed. */
  append<T extends JournalRecord["type"]>(type: T, data: RecordData<T>): { sequence: number; committed: Promise<RecordOf<T>> } {
    if (this.deletedAdmitted) throw new BrainRuntimeError("conflict", `session ${this.id} is deleted`);
    if (type === "session.deleted") this.deletedAdmitted = true;
    const record = { sessionId: this.id, sequence: this.seq++, at: Date.now(), type, data } as RecordOf<T>;
    const committed = this.store.append(record).then(() => {
      this.observe(record);
      return record;
    });
    // Fire-and-forget appends must not become unhandled rejections (e.g. during shutdown);
    // callers that await `committed` still see the failure.
    committed.catch(() => {});
    return { sequence: record.sequence, committed };
  }

  /** Called for every committed record, in order. */
  onCommit(listener: (r: JournalRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Committed records with a sequence above `sequence`, in order. */
  after(sequence: number): JournalRecord[] {
    // Sequences are gap-free from 1, so the index is the sequence.
    return this.records.slice(Math.max(0, sequence));
  }

  private observe(r: JournalRecord): void {
    this.records.push(r);
    if (r.type === "tool.call_started") this.openCalls.add(r.data.callId);
    else if (r.type === "tool.result") this.withResult.add(r.data.callId);
    else if (r.type === "tool.finished") {
      if (r.data.status !== "ok" || !this.withResult.has(r.data.callId)) this.observations.add(r.sequence);
      this.openCalls.delete(r.data.callId);
      this.withResult.delete(r.data.callId);
    } else if (r.type === "model.request") this.pendingModelRequests.add(r.sequence);
    else if (r.type === "model.response") {
      // Responses without `request` come from journals written before it existed: they answer the oldest open request.
      const answered = r.data.request ?? this.pendingModelRequests.values().next().value;
      if (answered !== undefined) this.pendingModelRequests.delete(answered);
    } else if (r.type === "session.deleted") this.deletedCommitted = true;
    for (const l of this.listeners) l(r);
  }

  view(running: boolean): Session {
    const s: Session = {
      id: this.id,
      createdAt: new Date(this.createdAt).toISOString(),
      status: this.deleted ? "deleted" : running ? "running" : "idle",
      model: this.created.model,
      tools: this.created.tools,
      lastSequence: this.lastSequence,
      openCalls: [...this.openCalls],
    };
    if (this.created.system !== undefined) s.system = this.created.system;
    if (this.created.deadlineMs !== undefined) s.deadlineMs = this.created.deadlineMs;
    return s;
  }
}
