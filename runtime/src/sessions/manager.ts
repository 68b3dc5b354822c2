import { randomBytes } from "node:crypto";
import type { CancelResponse, CreateSessionRequest, JournalRecord, Session, SessionCreatedRecord } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";
import type { JournalStore } from "../journal/store.ts";
import type { Dispatcher, PastCall } from "../dispatch/dispatcher.ts";
import { Agentloop } from "../agentloop/loop.ts";
import type { TurnEnd } from "../agentloop/loop.ts";
import { providerFor, refuseModel } from "../models/select.ts";
import type { ModelSettings } from "../models/select.ts";
import type { ModelProvider } from "../models/provider.ts";
import { unknownModelResponse } from "../models/journaled-call.ts";
import { contractDigest } from "../hosts/digest.ts";
import { SessionState } from "./session.ts";
import { ClosedJournal } from "./closed-journal.ts";
import type { SessionJournal } from "./closed-journal.ts";

interface Entry {
  state: SessionState;
  loop: Agentloop;
  provider: ModelProvider;
}

/**
 * Owns every session: creation checks, recovery after restart, messages, cancellation, deletion.
 * A deleted session is forgotten once its session.deleted is committed: only its final view (a
 * tombstone, what GET answers) stays in memory; its records are the store's (readable through
 * `journal`), and the store may compact them.
 */
export class SessionManager {
  private sessions = new Map<string, Entry>();
  /** Deleted sessions: their final view as JSON text (a third of the memory of the parsed objects). */
  private deleted = new Map<string, string>();

  constructor(
    private store: JournalStore,
    private dispatcher: () => Dispatcher,
    private models: ModelSettings = {},
  ) {}

  private entry(id: string): Entry {
    const e = this.sessions.get(id);
    if (e) return e;
    if (this.deleted.has(id)) throw new BrainRuntimeError("conflict", `session ${id} is deleted`);
    throw new BrainRuntimeError("not_found", `no session ${id}`);
  }

  /** A live (not deleted) session's state; `conflict` for a deleted one, `not_found` for an unknown one. */
  state(id: string): SessionState {
    return this.entry(id).state;
  }

  /** The model provider of a live session (ctx.model uses the session's fixed provider). */
  providerOf(id: string): ModelProvider | undefined {
    return this.sessions.get(id)?.provider;
  }

  /** The Agentloop of a live session, if any (commit callbacks of a forgotten session find none). */
  loopOf(id: string): Agentloop | undefined {
    return this.sessions.get(id)?.loop;
  }

  /** Throws `not_found` unless the session exists (live or deleted). */
  check(id: string): void {
    if (!this.sessions.has(id) && !this.deleted.has(id)) throw new BrainRuntimeError("not_found", `no session ${id}`);
  }

  /** What readers of a session's records use: the live state, or the store's records of a deleted session. */
  journal(id: string): SessionJournal {
    const e = this.sessions.get(id);
    if (e) return e.state;
    if (this.deleted.has(id)) return new ClosedJournal(this.store.loadSession(id));
    throw new BrainRuntimeError("not_found", `no session ${id}`);
  }

  /** Numbers of sessions held live and as tombstones (for tests and the bench). */
  get held(): { live: number; deleted: number } {
    return { live: this.sessions.size, deleted: this.deleted.size };
  }

  /** A call the dispatcher no longer holds, from the journal: undefined if it was never started. */
  pastCall(callId: string): PastCall | undefined {
    const sessionId = callId.slice(0, callId.lastIndexOf(":"));
    const live = this.sessions.get(sessionId);
    let started = live?.state.callStarted(callId);
    if (live === undefined && this.deleted.has(sessionId)) {
      const seq = Number(callId.slice(sessionId.length + 1));
      const r = Number.isInteger(seq) && seq > 0 ? this.store.loadSession(sessionId)[seq - 1] : undefined;
      if (r?.type === "tool.call_started" && r.data.callId === callId) started = r;
    }
    if (started === undefined) return undefined;
    const placement = started.data.placement;
    return { placedOn: (hostId) => placement.kind === "host" && placement.hostId === hostId };
  }

  /** Drops a deleted session from memory, keeping the tombstone GET answers with. */
  private forget(state: SessionState): void {
    this.deleted.set(state.id, JSON.stringify(state.view(false)));
    this.sessions.delete(state.id);
    this.dispatcher().forgetSession(state.id);
    this.store.forget(state.id);
  }

  private attach(state: SessionState): Entry {
    const provider = providerFor(state.created.model, this.models);
    const entry = { state, loop: new Agentloop(state, this.dispatcher(), provider), provider };
    this.sessions.set(state.id, entry);
    return entry;
  }

  async create(req: CreateSessionRequest): Promise<Session> {
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
    for (const t of req.tools) {
      const err = await this.dispatcher().environment(t.placement.kind)!.admit(t, id);
      if (err) throw new BrainRuntimeError(err.code, err.message, err.details);
    }
    const data: SessionCreatedRecord["data"] = { model: req.model, tools: req.tools };
    if (req.system !== undefined) data.system = req.system;
    if (req.deadlineMs !== undefined) data.deadlineMs = req.deadlineMs;
    const state = new SessionState(id, data, Date.now(), this.store);
    const entry = this.attach(state);
    await state.append("session.created", data).committed;
    return state.view(entry.loop.running);
  }

  /**
   * Rebuilds sessions from the store. Calls left open by a crash end `unknown` (never re-sent); a
   * turn that was running ends `turn.failed` (decided: not resumed, since its model call or its
   * tools' results may be lost). Returns when those records are committed.
   */
  async recover(): Promise<void> {
    const bySession = new Map<string, JournalRecord[]>();
    for (const r of this.store.loadRecords()) {
      let list = bySession.get(r.sessionId);
      if (!list) bySession.set(r.sessionId, (list = []));
      list.push(r);
    }
    const pending: Promise<unknown>[] = [];
    for (const [id, records] of bySession) {
      const first = records[0];
      if (first?.type !== "session.created") continue;
      const state = new SessionState(id, first.data, first.at, this.store, records);
      if (state.deleted) {
        this.forget(state);
        continue;
      }
      this.attach(state);
      for (const callId of state.openCalls) {
        pending.push(state.append("tool.finished", { callId, status: "unknown", message: "the runtime restarted with the call open; it is never re-sent" }).committed);
      }
      for (const request of state.pendingModelRequests) {
        const origin = (records[request - 1] as Extract<JournalRecord, { type: "model.request" }>).data.origin;
        const error = unknownModelResponse("the runtime restarted during the model call");
        pending.push(state.append("model.response", origin === undefined ? { request, error } : { request, origin, error }).committed);
      }
      const open = openTurn(records);
      if (open !== undefined) {
        pending.push(state.append("turn.failed", { activation: open, error: { code: "internal", message: "the runtime restarted during the turn" } }).committed);
      }
    }
    await Promise.all(pending);
    // Recovery records are not observations for a later wake.
    for (const e of this.sessions.values()) e.loop.skipAdmitted();
  }

  list(): Session[] {
    return [...[...this.sessions.values()].map((e) => e.state.view(e.loop.running)), ...[...this.deleted.values()].map((t) => JSON.parse(t) as Session)];
  }

  view(id: string): Session {
    const tomb = this.deleted.get(id);
    if (tomb !== undefined) return JSON.parse(tomb) as Session;
    const e = this.entry(id);
    return e.state.view(e.loop.running);
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
    this.forget(e.state);
    return this.view(id);
  }

  close(): void {
    for (const e of this.sessions.values()) e.loop.stop();
  }
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
