import type { ApprovalRequest, ApprovalResponse, CancelResponse, CreateSessionRequest, Decider, JournalRecord, PlacedTool, Session, SessionCreatedRecord } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";
import type { JournalStore, KeyedMessage } from "../journal/store.ts";
import type { SessionHead } from "../journal/head.ts";
import { hasOpenWork } from "../journal/head.ts";
import type { CallOwner, Dispatcher } from "../dispatch/dispatcher.ts";
import type { ToolCall } from "../dispatch/call.ts";
import type { Environment } from "../dispatch/environment.ts";
import { Agentloop } from "../agentloop/loop.ts";
import type { TurnEnd } from "../agentloop/loop.ts";
import { findTurnEnd } from "../agentloop/turn-end.ts";
import { ConversationCache } from "../agentloop/conversation-cache.ts";
import { providerFor } from "../models/select.ts";
import type { ModelSettings } from "../models/select.ts";
import { Redactor } from "../redact.ts";
import { SessionState, headView } from "../journal/session.ts";
import { callIdOf } from "../journal/call-id.ts";
import { StoredJournal, ExpandedJournal } from "./journal-readers.ts";
import { endOpenWork, waitingFor } from "./recover.ts";
import { checkNewSession, createdData } from "./create.ts";
import { SessionIds } from "./session-id.ts";
import type { SessionJournal } from "./journal-readers.ts";
import { SessionCalls } from "../dispatch/session-calls.ts";
import type { Limits } from "../dispatch/session-calls.ts";
import type { Residency, Resident } from "./residency.ts";
import { messageOf } from "../logger.ts";
import type { Logger } from "../logger.ts";
import type { Span } from "../telemetry/telemetry.ts";
import type { LimitsSource } from "../limits/tenant-gate.ts";

type Entry = Resident;

/** A message admitted by `send`, or the earlier one its idempotency key names. */
export interface MessageAdmission {
  activation: number;
  /** Of its message.user record. */
  sequence: number;
  /** Answered from an earlier message with the same idempotency key: nothing new was admitted. */
  replayed: boolean;
  /** Resolves once the message.user record is committed. */
  committed: Promise<unknown>;
  /**
   * The first end of the activation's turn; undefined once `signal` aborts first; rejects
   * `unavailable` when this node stops running the session first (SessionManager.evict, close).
   */
  end(signal?: AbortSignal): Promise<TurnEnd | undefined>;
}


/**
 * Owns every session: creation checks, recovery after restart, messages, cancellation, deletion.
 *
 * Sessions page: the journal (the store) holds every session; memory holds the resident ones, those
 * with work in flight plus up to `BRAIN_RESIDENT_SESSIONS` settled ones (sessions/residency.ts), least recently used first out. A
 * session that is not resident pages back in from its head when touched, reading only its
 * session.created record. A deleted session is never resident: its view and records are the store's.
 */
export class SessionManager {

  private conversations = new ConversationCache();
  /** Told of every session that stops being resident (a node of several lets go of its records). */
  private droppedListeners: Array<(id: string) => void> = [];

  /** Evictions so far, of any session: a page-in that saw one happen while it read starts over (pageIn). */
  private evictions = 0;

  /** New session ids, in creation order within this node (session-id.ts). */
  private ids = new SessionIds();

  constructor(
    private store: JournalStore,
    /** The sessions in memory (the dispatcher finds their calls through it too). */
    private resident: Residency,
    private dispatcher: Dispatcher,
    /** What one activation may spend (BRAIN_MAX_EMITTED_BYTES, BRAIN_MAX_MODEL_CALLS). */
    private limits: Limits,
    private models: ModelSettings = {},
    private redactor: Redactor = new Redactor(),
    /** Where failures the sessions survive are logged (an Environment's session hook); default the dispatcher's. */
    private logger: Logger = dispatcher.logger,
    /** The limits of the API key owning a session (its journal bytes); none: unlimited. */
    private tenants?: LimitsSource,
  ) {}

  /**
   * A live session's entry, paged in if needed; `conflict` for a deleted one, `not_found` for an
   * unknown one. A resident session's is returned at once (synchronously resolved), so a caller
   * that acts on it right after the await acts on the session as it found it.
   */
  private async entry(id: string): Promise<Entry> {
    const e = this.resident.touch(id);
    if (e) {
      // Sessions that settled since the last page-in go now, if there are too many.
      this.pageOut(id);
      return e;
    }
    return this.resident.arrive(id, () => this.pageIn(id));
  }

  /**
   * Reads a session's head and session.created record and makes it resident (a head with open work
   * is recovered instead, see below). An eviction while it
   * reads (a node of several lost the session and took it again: another node may have written it
   * in between) makes the head it read stale, so it reads again: a session run from a stale head
   * would write sequences the journal already has.
   */
  private async pageIn(id: string): Promise<Entry> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const epoch = this.evictions;
      const head = await this.store.head(id);
      if (head === undefined) throw new BrainRuntimeError("not_found", `no session ${id}`);
      if (head.deleted) throw new BrainRuntimeError("conflict", `session ${id} is deleted`);
      if (hasOpenWork(head)) {
        // Work open in the journal and nothing here running it (this process restarted or stopped
        // the run: a failed write, a lost lease): recovered as after a restart. Run by an idle
        // loop from its head, the session would start the next turn over the one left open.
        await this.recover([id]);
        const recovered = this.resident.get(id);
        if (recovered !== undefined) return recovered;
        continue;
      }
      const created = await this.createdOf(id);
      // Created meanwhile by another path (recovery of this very session): that one is the session.
      const there = this.resident.get(id);
      if (there !== undefined) return there;
      if (this.evictions !== epoch) continue;
      const entry = this.attach(SessionState.fromHead(head, created, this.store));
      this.pageOut(id);
      return entry;
    }
    throw new BrainRuntimeError("unavailable", `session ${id} is changing hands between nodes; retry`, undefined, true);
  }

  private async createdOf(id: string): Promise<SessionCreatedRecord["data"]> {
    const first = (await this.store.read(id, 0, 1))[0];
    if (first?.type !== "session.created") throw new BrainRuntimeError("not_found", `no session ${id}`);
    return first.data;
  }

  /** Tells `listener` of every session that stops being resident (a node of several lets go of its records). */
  onDropped(listener: (id: string) => void): void {
    this.droppedListeners.push(listener);
  }

  /** A live (not deleted) session's state, paged in if needed; `conflict` for a deleted one, `not_found` for an unknown one. */
  async state(id: string): Promise<SessionState> {
    return (await this.entry(id)).state;
  }

  /** A resident session's state, if it is resident (never pages in: tests and the bench look at one). */
  residentState(id: string): SessionState | undefined {
    return this.resident.get(id)?.state;
  }

  /** The Agentloop of a resident session, if any (the bench drives one directly). */
  loopOf(id: string): Agentloop | undefined {
    return this.resident.get(id)?.loop;
  }

  /** Throws `not_found` unless the session exists (live or deleted). */
  async check(id: string): Promise<void> {
    if (!this.resident.has(id) && (await this.store.head(id)) === undefined) throw new BrainRuntimeError("not_found", `no session ${id}`);
  }

  /**
   * What readers of a session's records use. `follow` (a stream) pages a live session in, so later
   * commits reach the reader; a one-off read of a session that is not resident reads the store
   * without paging it in. With `expand`, the Agentloop's requests come rebuilt (`expand=requests`).
   */
  async journal(id: string, opts: { expand?: boolean; follow?: boolean } = {}): Promise<SessionJournal> {
    let journal: SessionJournal;
    let created: () => Promise<SessionCreatedRecord["data"]> | SessionCreatedRecord["data"];
    const resident = this.resident.get(id);
    const head = resident === undefined ? await this.store.head(id) : undefined;
    if (resident === undefined && head === undefined) throw new BrainRuntimeError("not_found", `no session ${id}`);
    if (head !== undefined && (head.deleted || !opts.follow)) {
      journal = new StoredJournal(this.store, id, head.lastSequence);
      created = () => this.createdOf(id);
    } else {
      const state = (resident ?? (await this.entry(id))).state;
      journal = state;
      created = () => state.created;
    }
    return opts.expand ? new ExpandedJournal(journal, await created()) : journal;
  }

  /** Sessions held in memory (for tests and the bench). */
  get held(): { resident: number; conversations: number; calls: number; budgets: number } {
    return { resident: this.resident.size, conversations: this.conversations.size, ...this.resident.held };
  }

  /**
   * Drops a session from memory: deleted (its records stay the store's), settled and paged out, or
   * evicted. Requests still waiting for one of its turns are answered `unavailable` with `why`.
   */
  private drop(id: string, why = "this node stopped running the session"): void {
    const e = this.resident.remove(id);
    if (e === undefined) return;
    e.loop.stop(stoppedRunning(id, why));
    this.conversations.drop(id);
    for (const listener of this.droppedListeners) listener(id);
  }

  /**
   * Stops running a session here without writing anything: another node holds its lease now (a
   * write was fenced, or this node's lease expired). Its open calls are that node's to end.
   */
  evict(id: string): void {
    this.evictions += 1;
    const e = this.resident.get(id);
    const why = "this node stopped running the session (another node holds its lease now, or this node lost it)";
    e?.state.stopWriting(stoppedRunning(id, why));
    for (const call of e?.calls.open() ?? []) this.dispatcher.abandon(call);
    this.drop(id, why);
  }

  isResident(id: string): boolean {
    return this.resident.has(id);
  }

  /** Pages out settled sessions beyond the limit, least recently touched first; never `keep`, which a caller is about to use. */
  private pageOut(keep?: string): void {
    if (this.resident.size <= this.resident.limit) return;
    for (const id of this.resident.beyondLimit(settled, keep)) this.drop(id);
  }

  private attach(state: SessionState): Entry {
    state.redactWith(this.redactor);
    const owner = state.created.owner;
    const tenants = this.tenants;
    if (owner !== undefined && tenants !== undefined) state.limitBytes(() => tenants.limitsOf(owner)?.journalBytes);
    const provider = providerFor(state.created.model, this.models);
    const calls = new SessionCalls(state, this.limits);
    const entry = { state, loop: new Agentloop(state, this.dispatcher, provider, calls, this.conversations, this.logger), calls, provider };
    this.resident.add(entry);
    return entry;
  }

  /**
   * Whether the session exists (live or deleted) and who created it: `owner` is the API key, absent
   * for the operator token; undefined for a session never created. Read from memory or its head,
   * never its records (http/session-access.ts decides who may see it).
   */
  async creator(id: string): Promise<{ owner?: string } | undefined> {
    const resident = this.resident.get(id);
    if (resident !== undefined) return resident.state.created.owner === undefined ? {} : { owner: resident.state.created.owner };
    const head = await this.store.head(id);
    if (head === undefined) return undefined;
    return head.owner === undefined ? {} : { owner: head.owner };
  }

  /** `owner`: the API key creating the session (absent: the operator token). */
  async create(req: CreateSessionRequest, owner?: string): Promise<Session> {
    checkNewSession(req, this.models, (kind) => this.dispatcher.environment(kind));
    const id = this.ids.next();
    // All or nothing: a failure from here on releases what the Environments admitted and leaves
    // nothing resident; the journal holds the session only once session.created is committed.
    const admitted: PlacedTool[] = [];
    let session: Session;
    try {
      session = await this.admitAndCreate(req, id, owner, admitted);
    } catch (e) {
      this.drop(id);
      for (const t of admitted) this.dispatcher.environment(t.placement.kind)?.release?.(t, id);
      throw e;
    }
    await this.eachEnvironment(req.tools, (env, tools) => env.sessionCreated?.(id, tools, owner));
    this.logger.debug("a session was created", { sessionId: id, owner, tools: req.tools.length });
    return session;
  }

  /**
   * Runs a session hook of every Environment the session's tools are placed in, with its tools, and
   * awaits them all. The session exists either way: a hook's failure is not the request's (the
   * Environment reports it to the calls), so it is logged here and the request goes on.
   */
  private async eachEnvironment(tools: PlacedTool[], hook: (env: Environment, tools: PlacedTool[]) => Promise<void> | void): Promise<void> {
    const byKind = new Map<PlacedTool["placement"]["kind"], PlacedTool[]>();
    for (const t of tools) byKind.set(t.placement.kind, [...(byKind.get(t.placement.kind) ?? []), t]);
    await Promise.all([...byKind].map(async ([kind, mine]) => {
      const env = this.dispatcher.environment(kind);
      if (env !== undefined) {
        await Promise.resolve().then(() => hook(env, mine)).catch((e: unknown) => {
          this.logger.warn(`a session hook of the ${kind} Environment failed; the session goes on and its calls report what is missing`, { kind, error: messageOf(e) });
        });
      }
    }));
  }

  private async admitAndCreate(req: CreateSessionRequest, id: string, owner: string | undefined, admitted: PlacedTool[]): Promise<Session> {
    for (const t of req.tools) {
      admitted.push(t);
      const err = await this.dispatcher.environment(t.placement.kind)!.admit(t, id, owner);
      if (err) throw BrainRuntimeError.of(err);
    }
    const data = createdData(req, owner);
    const state = SessionState.create(id, data, this.store);
    const entry = this.attach(state);
    await state.append("session.created", data).committed;
    this.pageOut(id);
    return state.view(entry.loop.busy);
  }

  /**
   * Recovery after a restart reads only the sessions with open work (the store's heads say which);
   * every other session pages in when touched. Calls left open by a crash end `unknown` (never
   * re-sent); model requests left open are answered `unknown`; a turn that was running ends
   * `turn.failed` (decided: not resumed, since its model call or its tools' results may be lost).
   * Returns when those records are committed. A node of several recovers the sessions it takes
   * over from a dead node the same way, one at a time (`ids`).
   */
  async recover(only?: string[]): Promise<void> {
    const ids = only ?? (await this.store.openWork());
    const pending: Promise<unknown>[] = [];
    const recovered: Entry[] = [];
    for (const id of ids) {
      const records = await this.store.read(id);
      if (records[0]?.type !== "session.created") continue;
      const state = SessionState.fromRecords(id, records, this.store);
      // Deleted, or resident already (recovered by another path while this one read): nothing to do.
      if (state.deleted || this.resident.has(id)) continue;
      const entry = this.attach(state);
      recovered.push(entry);
      const waiting = waitingFor(state, records);
      pending.push(...endOpenWork(state, records, waiting));
      // Calls awaiting approval go on waiting (nothing of them was sent), and so does their turn.
      const held = waiting.calls.flatMap((r) => this.dispatcher.restore(state, r, entry.loop) ?? []);
      if (waiting.resumed !== undefined) entry.loop.resume(waiting.resumed, held.filter((c) => c.info.activation === waiting.resumed));
    }
    await Promise.all(pending);
    // Recovery records are not observations for a later wake.
    for (const e of recovered) e.loop.skipAdmitted();
    this.pageOut();
  }

  /** A resident session's view as it is now (running while its loop runs, its open calls); undefined for one that is not resident. */
  liveView(id: string): Session | undefined {
    const e = this.resident.get(id);
    return e === undefined ? undefined : e.state.view(e.loop.busy);
  }

  async view(id: string): Promise<Session> {
    const e = this.resident.get(id);
    if (e) return e.state.view(e.loop.busy);
    const head = await this.store.head(id);
    if (head === undefined) throw new BrainRuntimeError("not_found", `no session ${id}`);
    const created = await this.createdOf(id);
    // Paged in while the store was read: memory is newer.
    return this.liveView(id) ?? headView(head, created);
  }

  /**
   * Admits a user message, starting an activation. With an idempotency key, a message the session
   * already holds under that key is answered instead (`replayed`; another text is `invalid_request`)
   * and nothing is admitted: the same key never starts a second turn. Keys admitted and not committed
   * yet are found in the session's memory (SessionState.keysInFlight), committed ones in the store
   * (findMessage: the journal, so also after a restart, a page-out or on another node). The look in
   * memory after the store's answer and the admission are one synchronous step, so of two requests
   * with one key the one that resumes second sees the first's; if any message was admitted while the
   * store was read (it may be this key's, committed and gone from memory by now), the store is asked again.
   */
  async send(id: string, text: string, idempotencyKey?: string, parent?: Span): Promise<MessageAdmission> {
    if (idempotencyKey === undefined) {
      const counting = (await this.entry(id)).state.journalBytesReady();
      if (counting !== undefined) await counting;
      return this.admit(await this.entry(id), text, undefined, parent);
    }
    if (!this.resident.has(id)) {
      // Not resident: nothing of it is in flight, and its committed keys are the store's. Asked
      // first, so a key of a deleted session is still answered (it would not page in).
      const found = await this.store.findMessage(id, idempotencyKey);
      if (found !== undefined) return this.replay(id, idempotencyKey, { ...found, committed: Promise.resolve() }, text);
    }
    let counted = false;
    for (;;) {
      const e = await this.entry(id);
      const counting = counted ? undefined : e.state.journalBytesReady();
      if (counting !== undefined) {
        // The session's journal bytes are read once; then the session is looked at again as it is now.
        counted = true;
        await counting;
        continue;
      }
      const seen = e.state.activation;
      const inFlight = e.state.keysInFlight.get(idempotencyKey);
      if (inFlight !== undefined) return this.replay(id, idempotencyKey, inFlight, text);
      const found = await this.store.findMessage(id, idempotencyKey);
      // Paged out and in again while the store was read: look again at the session as it is now.
      if (this.resident.get(id) !== e) continue;
      const admitted = e.state.keysInFlight.get(idempotencyKey);
      if (admitted !== undefined) return this.replay(id, idempotencyKey, admitted, text);
      if (found !== undefined) return this.replay(id, idempotencyKey, { ...found, committed: Promise.resolve() }, text);
      if (e.state.activation === seen) return this.admit(e, text, idempotencyKey, parent);
    }
  }

  /** `parent`: the span of the request that sent the message (tracing on): the turn's span is its child. */
  private admit(e: Entry, text: string, key?: string, parent?: Span): MessageAdmission {
    // A session of a key at its journal-bytes limit takes no new message (a replay above is still answered).
    e.state.checkJournalBytes("message refused");
    const loop = e.loop;
    const m = loop.send(text, key, parent);
    if (key !== undefined) {
      const held = { sequence: m.sequence, activation: m.activation, text, committed: m.committed };
      e.state.keysInFlight.set(key, held);
      // Once committed (or failed), the store answers for it.
      const release = () => {
        if (e.state.keysInFlight.get(key) === held) e.state.keysInFlight.delete(key);
      };
      m.committed.then(release, release);
    }
    return { activation: m.activation, sequence: m.sequence, replayed: false, committed: m.committed, end: (signal) => loop.turnEnd(m.activation, m.sequence, signal) };
  }

  private replay(id: string, key: string, first: KeyedMessage & { committed: Promise<unknown> }, text: string): MessageAdmission {
    if (first.text !== text) {
      throw new BrainRuntimeError("invalid_request", `Idempotency-Key ${JSON.stringify(key)} was already used on session ${id} for another message (sequence ${first.sequence}); a key names one message: use a new key for a new message`, { sequence: first.sequence });
    }
    return { activation: first.activation, sequence: first.sequence, replayed: true, committed: first.committed, end: (signal) => this.turnEnd(id, first.activation, first.sequence, signal) };
  }

  /**
   * The first turn end of `activation` after sequence `after`. A session that is not resident is
   * read from the store first (a turn that ended long ago does not page it in); one whose turn has
   * not ended is paged in and waited on.
   */
  private async turnEnd(id: string, activation: number, after: number, signal?: AbortSignal): Promise<TurnEnd | undefined> {
    const resident = this.resident.get(id);
    if (resident !== undefined) return resident.loop.turnEnd(activation, after, signal);
    const head = await this.store.head(id);
    if (head === undefined) throw new BrainRuntimeError("not_found", `no session ${id}`);
    const ended = await findTurnEnd(new StoredJournal(this.store, id, head.lastSequence), activation, after);
    if (ended !== undefined) return ended;
    if (head.deleted) throw new BrainRuntimeError("conflict", `session ${id} is deleted`);
    return (await this.entry(id)).loop.turnEnd(activation, after, signal);
  }

  /**
   * Starts one call of a tool placed in the session without a model turn (an MCP client's
   * `tools/call`: docs/decisions/mcp-server.md). It is an activation of its own, opened by a
   * message.user record naming the request (`text`), so it gets its own emission and model-call
   * budgets; no turn.started follows and the Agentloop is not woken by its records. The call is
   * journaled and dispatched as every call is (intent committed first, sent once, deadline armed).
   * `listen` hears the call's committed tool.event, tool.result and tool.finished records, in order;
   * `call.outcome()` resolves once its tool.finished is committed.
   */
  async startCall(id: string, toolName: string, input: unknown, deadlineAt: number | null, text: string, listen: (r: JournalRecord) => void): Promise<ToolCall> {
    const e = await this.entry(id);
    if (e.state.deletedAdmitted) throw new BrainRuntimeError("conflict", `session ${id} is deleted`);
    const tool = e.state.created.tools.find((t) => t.contract.name === toolName);
    if (tool === undefined) throw new BrainRuntimeError("not_found", `no tool ${toolName} is placed in session ${id}`);
    e.state.checkJournalBytes("call refused");
    const activation = ++e.state.activation;
    e.state.append("message.user", { text, activation });
    // The call's id is known once start() returns, before any commit can be heard (commits land later).
    let callId: string | undefined;
    const stop = e.state.onCommit((r) => {
      if (callId !== undefined && (r.type === "tool.event" || r.type === "tool.result" || r.type === "tool.finished") && r.data.callId === callId) listen(r);
    });
    const owner: CallOwner = {
      provider: e.provider,
      calls: e.calls,
      committed: (_call, kind) => {
        if (kind !== "finished") return;
        stop();
        // Nothing here is for the Agentloop: it has seen all of it, so the session can settle and page out.
        e.loop.skipAdmitted();
      },
    };
    const call = this.dispatcher.start(e.state, activation, [{ tool, input, deadlineAt }], owner)[0]!;
    callId = call.callId;
    return call;
  }

  /** Cancels a call `startCall` started (an MCP client's notifications/cancelled); false when it had ended. */
  async cancelCall(call: ToolCall): Promise<boolean> {
    return (await this.dispatcher.cancel([call])).length > 0;
  }

  /** Cancels one call, or the running activation with all its open calls. */
  async cancel(id: string, callId?: string): Promise<CancelResponse> {
    const e = await this.entry(id);
    if (e.state.deletedAdmitted) throw new BrainRuntimeError("conflict", `session ${id} is deleted`);
    const dispatcher = this.dispatcher;
    if (callId !== undefined) {
      const call = e.calls.get(callId);
      if (call === undefined) {
        if ((await e.state.callStarted(callId)) !== undefined) return { cancelled: [] };
        throw new BrainRuntimeError("not_found", `no call ${callId} in session ${id}`);
      }
      return { cancelled: await dispatcher.cancel([call]) };
    }
    const ended = dispatcher.cancel(e.calls.open(e.state.activation));
    const turn = e.loop.cancelTurn("the activation was cancelled");
    e.loop.skipAdmitted();
    await turn;
    return { cancelled: await ended };
  }

  /**
   * Decides the approval the call with tool.call_started `sequence` awaits, as `decidedBy` (the
   * request's authenticated principal). `not_found` when no call has that sequence; `conflict` when it
   * awaits no decision (decided, ended, or its tool needs none); `digest_mismatch` for another input.
   * Answers once tool.approval_decided is committed; an approved call is dispatched then, once.
   */
  async decide(id: string, sequence: number, body: ApprovalRequest, decidedBy: Decider): Promise<ApprovalResponse> {
    const e = await this.entry(id);
    if (e.state.deletedAdmitted) throw new BrainRuntimeError("conflict", `session ${id} is deleted`);
    const callId = callIdOf(id, sequence);
    const call = e.calls.get(callId);
    if (call === undefined) {
      const started = await e.state.callStarted(callId);
      if (started === undefined) throw new BrainRuntimeError("not_found", `no call ${callId} in session ${id}`);
      if (started.data.approval === undefined) throw new BrainRuntimeError("conflict", `call ${callId} awaits no approval: its tool ${started.data.tool} is not placed with approval`, { state: "no_approval" });
      throw new BrainRuntimeError("conflict", `call ${callId} already ended; it can no longer be decided`, { state: "ended" });
    }
    const decision = { decision: body.decision, inputDigest: body.inputDigest, decidedBy, ...(body.reason !== undefined ? { reason: body.reason } : {}) };
    const at = await this.dispatcher.decide(call, decision);
    return { callId, decision: body.decision, decidedBy, sequence: at };
  }

  async delete(id: string): Promise<Session> {
    const e = await this.entry(id);
    if (e.state.deletedAdmitted) throw new BrainRuntimeError("conflict", `session ${id} is already deleted`);
    const dispatcher = this.dispatcher;
    const ended = dispatcher.cancel(e.calls.open());
    const turn = e.loop.cancelTurn("the session was deleted");
    e.loop.stop();
    const deleted = e.state.append("session.deleted", {});
    await Promise.all([ended, turn, deleted.committed]);
    // Host processes and folders the session's Environments hold for it go now (awaited).
    await this.eachEnvironment(e.state.created.tools, (env) => env.sessionDeleted?.(id));
    const view = e.state.view(false);
    this.drop(id);
    return view;
  }

  close(): void {
    for (const e of this.resident.values()) e.loop.stop(stoppedRunning(e.state.id, "the runtime is shutting down"));
  }
}

/** What a request waiting for a turn of a session this node stopped running is answered (503, retryable). */
function stoppedRunning(id: string, why: string): BrainRuntimeError {
  return new BrainRuntimeError("unavailable", `${why} (session ${id}): the turn's outcome is unknown here; send the request again with the same Idempotency-Key`, undefined, true);
}

/** Nothing in flight, nobody following it: the session can page out and back in from its head. */
function settled(e: Entry): boolean {
  const s = e.state;
  return e.loop.settled && s.quiet && s.openCalls.size === 0 && s.pendingModelRequests.size === 0 && !s.watched;
}
