import { randomBytes } from "node:crypto";
import type { CancelResponse, CreateSessionRequest, JournalRecord, PlacedTool, Session, SessionCreatedRecord } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";
import type { JournalStore } from "../journal/store.ts";
import type { Dispatcher, PastCall } from "../dispatch/dispatcher.ts";
import type { Environment } from "../dispatch/environment.ts";
import { Agentloop } from "../agentloop/loop.ts";
import type { TurnEnd } from "../agentloop/loop.ts";
import { ConversationCache } from "../agentloop/conversation-cache.ts";
import { providerFor, refuseModel } from "../models/select.ts";
import type { ModelSettings } from "../models/select.ts";
import type { ModelProvider } from "../models/provider.ts";
import { unknownModelResponse } from "../models/journaled-call.ts";
import { contractDigest } from "../hosts/digest.ts";
import { Redactor } from "../redact.ts";
import { SessionState, headView } from "../journal/session.ts";
import { StoredJournal, ExpandedJournal } from "./journal-readers.ts";
import type { SessionJournal } from "./journal-readers.ts";

interface Entry {
  state: SessionState;
  loop: Agentloop;
  provider: ModelProvider;
}

/** Settled sessions kept in memory beyond those with work in flight (least recently used out). */
export const DEFAULT_RESIDENT_SESSIONS = 256;

/**
 * Owns every session: creation checks, recovery after restart, messages, cancellation, deletion.
 *
 * Sessions page: the journal (the store) holds every session; memory holds the resident ones, those
 * with work in flight plus up to `residentLimit` settled ones, least recently used first out. A
 * session that is not resident pages back in from its head when touched, reading only its
 * session.created record. A deleted session is never resident: its view and records are the store's.
 */
export class SessionManager {
  /** Resident sessions, least recently touched first. */
  private resident = new Map<string, Entry>();
  private conversations = new ConversationCache();
  /** Told of every session that stops being resident (a node of several lets go of its records). */
  dropped: (id: string) => void = () => {};

  constructor(
    private store: JournalStore,
    private dispatcher: () => Dispatcher,
    private models: ModelSettings = {},
    readonly residentLimit = DEFAULT_RESIDENT_SESSIONS,
    private redactor: Redactor = new Redactor(),
  ) {}

  /** A live session's entry, paged in if needed; `conflict` for a deleted one, `not_found` for an unknown one. */
  private entry(id: string): Entry {
    const e = this.resident.get(id);
    if (e) {
      this.resident.delete(id);
      this.resident.set(id, e);
      // Sessions that settled since the last page-in go now, if there are too many.
      this.pageOut(id);
      return e;
    }
    const head = this.store.head(id);
    if (head === undefined) throw new BrainRuntimeError("not_found", `no session ${id}`);
    if (head.deleted) throw new BrainRuntimeError("conflict", `session ${id} is deleted`);
    const entry = this.attach(SessionState.fromHead(head, this.createdOf(id), this.store));
    this.pageOut(id);
    return entry;
  }

  private createdOf(id: string): SessionCreatedRecord["data"] {
    const first = this.store.read(id, 0, 1)[0];
    if (first?.type !== "session.created") throw new BrainRuntimeError("not_found", `no session ${id}`);
    return first.data;
  }

  /** A live (not deleted) session's state, paged in if needed; `conflict` for a deleted one, `not_found` for an unknown one. */
  state(id: string): SessionState {
    return this.entry(id).state;
  }

  /** The model provider of a resident session (ctx.model comes from an open call, so its session is resident). */
  providerOf(id: string): ModelProvider | undefined {
    return this.resident.get(id)?.provider;
  }

  /** The Agentloop of a resident session, if any (commit callbacks of a deleted session find none). */
  loopOf(id: string): Agentloop | undefined {
    return this.resident.get(id)?.loop;
  }

  /** Throws `not_found` unless the session exists (live or deleted). */
  check(id: string): void {
    if (!this.resident.has(id) && this.store.head(id) === undefined) throw new BrainRuntimeError("not_found", `no session ${id}`);
  }

  /**
   * What readers of a session's records use. `follow` (a stream) pages a live session in, so later
   * commits reach the reader; a one-off read of a session that is not resident reads the store
   * without paging it in. With `expand`, the Agentloop's requests come rebuilt (`expand=requests`).
   */
  journal(id: string, opts: { expand?: boolean; follow?: boolean } = {}): SessionJournal {
    let journal: SessionJournal;
    let created: () => SessionCreatedRecord["data"];
    const resident = this.resident.get(id);
    const head = resident === undefined ? this.store.head(id) : undefined;
    if (resident === undefined && head === undefined) throw new BrainRuntimeError("not_found", `no session ${id}`);
    if (head !== undefined && (head.deleted || !opts.follow)) {
      journal = new StoredJournal(this.store, id, head.lastSequence);
      created = () => this.createdOf(id);
    } else {
      const state = (resident ?? this.entry(id)).state;
      journal = state;
      created = () => state.created;
    }
    return opts.expand ? new ExpandedJournal(journal, created()) : journal;
  }

  /** Sessions held in memory (for tests and the bench). */
  get held(): { resident: number; conversations: number } {
    return { resident: this.resident.size, conversations: this.conversations.size };
  }

  /** A call the dispatcher no longer holds, from the journal: undefined if it was never started. */
  pastCall(callId: string): PastCall | undefined {
    const sessionId = callId.slice(0, callId.lastIndexOf(":"));
    const seq = Number(callId.slice(sessionId.length + 1));
    if (!Number.isInteger(seq) || seq < 1) return undefined;
    let r: JournalRecord | undefined;
    try {
      r = this.resident.get(sessionId)?.state.callStarted(callId) ?? this.store.read(sessionId, seq - 1, seq)[0];
    } catch {
      // A node of several reads only the sessions it holds: a frame for a call of a session another
      // node runs now is answered as for a finished call (`call_finished`), never dispatched here.
      return { placedOn: () => true };
    }
    if (r?.type !== "tool.call_started" || r.data.callId !== callId) return undefined;
    const placement = r.data.placement;
    return {
      placedOn: (hostId, binding) =>
        placement.kind === "host" ? placement.hostId === hostId : placement.kind === "managed" && binding?.sessionId === sessionId && binding.env === placement.env,
    };
  }

  /** Drops a session from memory: deleted (its records stay the store's), or settled and paged out. */
  private drop(id: string): void {
    const e = this.resident.get(id);
    if (e === undefined) return;
    e.loop.stop();
    this.resident.delete(id);
    this.dispatcher().forgetSession(id);
    this.conversations.drop(id);
    this.dropped(id);
  }

  /**
   * Stops running a session here without writing anything: another node holds its lease now (a
   * write was fenced, or this node's lease expired). Its open calls are that node's to end.
   */
  evict(id: string): void {
    const dispatcher = this.dispatcher();
    for (const call of dispatcher.openCalls(id)) dispatcher.abandon(call);
    this.drop(id);
  }

  isResident(id: string): boolean {
    return this.resident.has(id);
  }

  /** Pages out settled sessions beyond the limit, least recently touched first; never `keep`, which a caller is about to use. */
  private pageOut(keep?: string): void {
    if (this.resident.size <= this.residentLimit) return;
    let excess = this.resident.size - this.residentLimit;
    for (const [id, e] of this.resident) {
      if (excess <= 0) break;
      if (id !== keep && settled(e)) {
        this.drop(id);
        excess -= 1;
      }
    }
  }

  private attach(state: SessionState): Entry {
    state.redactWith(this.redactor);
    const provider = providerFor(state.created.model, this.models);
    const entry = { state, loop: new Agentloop(state, this.dispatcher(), provider, this.conversations), provider };
    this.resident.set(state.id, entry);
    return entry;
  }

  /**
   * Whether the session exists (live or deleted) and who created it: `owner` is the API key, absent
   * for the operator token; undefined for a session never created. Read from memory or its head,
   * never its records (http/session-access.ts decides who may see it).
   */
  creator(id: string): { owner?: string } | undefined {
    const resident = this.resident.get(id);
    if (resident !== undefined) return resident.state.created.owner === undefined ? {} : { owner: resident.state.created.owner };
    const head = this.store.head(id);
    if (head === undefined) return undefined;
    return head.owner === undefined ? {} : { owner: head.owner };
  }

  /** `owner`: the API key creating the session (absent: the operator token). */
  async create(req: CreateSessionRequest, owner?: string): Promise<Session> {
    const refused = refuseModel(req.model, this.models);
    if (refused) throw refused;
    const names = new Set<string>();
    for (const t of req.tools) {
      if (names.has(t.contract.name)) throw new BrainRuntimeError("invalid_request", `tool ${t.contract.name} is placed twice`);
      names.add(t.contract.name);
      const digest = contractDigest(t.contract);
      if (digest !== t.contract.digest) throw new BrainRuntimeError("invalid_request", `tool ${t.contract.name}: digest ${t.contract.digest} does not match its schemas (expected ${digest})`);
      const env = this.dispatcher().environment(t.placement.kind);
      if (env === undefined) throw new BrainRuntimeError("unsupported", `this runtime does not run the ${t.placement.kind} environment (tool ${t.contract.name})`, { tool: t.contract.name, placement: t.placement.kind });
    }
    if (req.model.provider === "scripted") {
      req.model.script.forEach((step, i) => {
        for (const c of step.toolCalls ?? []) {
          if (!names.has(c.name)) throw new BrainRuntimeError("invalid_request", `script step ${i + 1} calls tool ${c.name}, which is not placed in this session`);
        }
      });
    }
    const id = `ses_${randomBytes(10).toString("hex")}`;
    // All or nothing: a failure from here on releases what the Environments admitted and leaves
    // nothing resident; the journal holds the session only once session.created is committed.
    const admitted: PlacedTool[] = [];
    let session: Session;
    try {
      session = await this.admitAndCreate(req, id, owner, admitted);
    } catch (e) {
      this.drop(id);
      for (const t of admitted) this.dispatcher().environment(t.placement.kind)?.release?.(t, id);
      throw e;
    }
    await this.eachEnvironment(req.tools, (env, tools) => env.sessionCreated?.(id, tools, owner));
    return session;
  }

  /**
   * Runs a session hook of every Environment the session's tools are placed in, with its tools, and
   * awaits them all. The session exists either way: a hook's failure is not the request's (the
   * Environment reports it to the calls), so it is swallowed here.
   */
  private async eachEnvironment(tools: PlacedTool[], hook: (env: Environment, tools: PlacedTool[]) => Promise<void> | void): Promise<void> {
    const byKind = new Map<PlacedTool["placement"]["kind"], PlacedTool[]>();
    for (const t of tools) byKind.set(t.placement.kind, [...(byKind.get(t.placement.kind) ?? []), t]);
    await Promise.all([...byKind].map(async ([kind, mine]) => {
      const env = this.dispatcher().environment(kind);
      if (env !== undefined) await Promise.resolve().then(() => hook(env, mine)).catch(() => {});
    }));
  }

  private async admitAndCreate(req: CreateSessionRequest, id: string, owner: string | undefined, admitted: PlacedTool[]): Promise<Session> {
    for (const t of req.tools) {
      admitted.push(t);
      const err = await this.dispatcher().environment(t.placement.kind)!.admit(t, id, owner);
      if (err) throw new BrainRuntimeError(err.code, err.message, err.details);
    }
    const data: SessionCreatedRecord["data"] = { model: req.model, tools: req.tools };
    if (owner !== undefined) data.owner = owner;
    if (req.system !== undefined) data.system = req.system;
    if (req.deadlineMs !== undefined) data.deadlineMs = req.deadlineMs;
    const state = SessionState.create(id, data, this.store);
    const entry = this.attach(state);
    await state.append("session.created", data).committed;
    this.pageOut(id);
    return state.view(entry.loop.running);
  }

  /**
   * Recovery after a restart reads only the sessions with open work (the store's heads say which);
   * every other session pages in when touched. Calls left open by a crash end `unknown` (never
   * re-sent); model requests left open are answered `unknown`; a turn that was running ends
   * `turn.failed` (decided: not resumed, since its model call or its tools' results may be lost).
   * Returns when those records are committed. A node of several recovers the sessions it takes
   * over from a dead node the same way, one at a time (`ids`).
   */
  async recover(ids: string[] = this.store.openWork()): Promise<void> {
    const pending: Promise<unknown>[] = [];
    const recovered: Entry[] = [];
    for (const id of ids) {
      const records = this.store.read(id);
      if (records[0]?.type !== "session.created") continue;
      const state = SessionState.fromRecords(id, records, this.store);
      if (state.deleted) continue;
      recovered.push(this.attach(state));
      for (const callId of state.openCalls) {
        pending.push(state.append("tool.finished", { callId, status: "unknown", message: "the runtime restarted with the call open; it is never re-sent" }).committed);
      }
      for (const request of state.pendingModelRequests) {
        const origin = (records[request - 1] as Extract<JournalRecord, { type: "model.request" }>).data.origin;
        const error = unknownModelResponse("the runtime restarted during the model call");
        pending.push(state.append("model.response", origin === undefined ? { request, error } : { request, origin, error }).committed);
      }
      // Environment control operations left unanswered (the nested call of a `call`, if any, ends `unknown` above).
      for (const r of openEnvironmentRequests(records)) {
        pending.push(state.append("environment.response", { origin: r.data.origin, request: r.sequence, error: { code: "unknown", message: "the runtime restarted during the operation" } }).committed);
      }
      const open = openTurn(records);
      if (open !== undefined) {
        pending.push(state.append("turn.failed", { activation: open, error: { code: "internal", message: "the runtime restarted during the turn" } }).committed);
      }
    }
    await Promise.all(pending);
    // Recovery records are not observations for a later wake.
    for (const e of recovered) e.loop.skipAdmitted();
    this.pageOut();
  }

  /** A resident session's view as it is now (running while its loop runs, its open calls); undefined for one that is not resident. */
  liveView(id: string): Session | undefined {
    const e = this.resident.get(id);
    return e === undefined ? undefined : e.state.view(e.loop.running);
  }

  view(id: string): Session {
    return this.viewOf(id);
  }

  private viewOf(id: string): Session {
    const e = this.resident.get(id);
    if (e) return e.state.view(e.loop.running);
    const head = this.store.head(id);
    if (head === undefined) throw new BrainRuntimeError("not_found", `no session ${id}`);
    return headView(head, this.createdOf(id));
  }

  send(id: string, text: string): { activation: number; sequence: number; committed: Promise<unknown>; done: Promise<TurnEnd> } {
    const e = this.entry(id);
    return e.loop.send(text);
  }

  /** Cancels one call, or the running activation with all its open calls. */
  async cancel(id: string, callId?: string): Promise<CancelResponse> {
    const e = this.entry(id);
    if (e.state.deletedAdmitted) throw new BrainRuntimeError("conflict", `session ${id} is deleted`);
    const dispatcher = this.dispatcher();
    if (callId !== undefined) {
      const call = dispatcher.getCall(callId);
      if (call === undefined || !callId.startsWith(`${id}:`)) {
        if (e.state.callStarted(callId) !== undefined) return { cancelled: [] };
        throw new BrainRuntimeError("not_found", `no call ${callId} in session ${id}`);
      }
      return { cancelled: await dispatcher.cancel([call]) };
    }
    const ended = dispatcher.cancel(dispatcher.openCalls(id, e.state.activation));
    const turn = e.loop.cancelTurn("the activation was cancelled");
    e.loop.skipAdmitted();
    await turn;
    return { cancelled: await ended };
  }

  async delete(id: string): Promise<Session> {
    const e = this.entry(id);
    if (e.state.deletedAdmitted) throw new BrainRuntimeError("conflict", `session ${id} is already deleted`);
    const dispatcher = this.dispatcher();
    const ended = dispatcher.cancel(dispatcher.openCalls(id));
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
    for (const e of this.resident.values()) e.loop.stop();
  }
}

/** Nothing in flight, nobody following it: the session can page out and back in from its head. */
function settled(e: Entry): boolean {
  const s = e.state;
  return e.loop.settled && s.quiet && s.openCalls.size === 0 && s.pendingModelRequests.size === 0 && !s.watched;
}

/** environment.request records without an environment.response. */
function openEnvironmentRequests(records: JournalRecord[]): Extract<JournalRecord, { type: "environment.request" }>[] {
  const open = new Map<number, Extract<JournalRecord, { type: "environment.request" }>>();
  for (const r of records) {
    if (r.type === "environment.request") open.set(r.sequence, r);
    else if (r.type === "environment.response") open.delete(r.data.request);
  }
  return [...open.values()];
}

/** The activation of a turn.started that has no later turn.completed/turn.failed. */
function openTurn(records: JournalRecord[]): number | undefined {
  let open: number | undefined;
  for (const r of records) {
    if (r.type === "turn.started") open = r.data.activation;
    if (r.type === "turn.completed" || r.type === "turn.failed") open = undefined;
  }
  return open;
}
