import type { JournalRecord } from "@aexhq/brain-protocol";
import type { SessionState } from "../journal/session.ts";
import { unknownModelResponse } from "../models/journaled-call.ts";
import { denialError } from "../dispatch/call.ts";

/**
 * What recovery writes for one session with open work, read whole from its records (after a
 * restart, or a takeover by another node), and returns the commits to await. Nothing is resumed or
 * re-sent, because its outcome may be lost:
 * - an open call ends `tool.finished` `unknown`, except one that awaits approval (`waiting`: nothing
 *   of it was sent, so it goes on waiting; the caller holds it again); a denied call whose end was
 *   not committed yet ends `approval_denied`;
 * - an open model request (the Agentloop's or a tool's `ctx.model`) is answered `unknown`;
 * - an open Environment control operation is answered `unknown` (the nested call of a `call`, if
 *   any, is an open call above);
 * - a running turn ends `turn.failed` `interrupted` (retryable: a planned event, not a bug; a new
 *   message runs a new turn), unless it waits for a call that awaits approval (`resumed`): that turn
 *   goes on waiting, since its model's reply is committed and nothing of the waiting call was sent.
 */
export function endOpenWork(state: SessionState, records: JournalRecord[], waiting: Waiting): Promise<unknown>[] {
  const pending: Promise<unknown>[] = [];
  for (const callId of state.openCalls) {
    if (waiting.calls.some((c) => c.data.callId === callId)) continue;
    const denied = waiting.denied.get(callId);
    if (denied !== undefined) pending.push(state.append("tool.finished", { callId, status: "error", error: denied }).committed);
    else pending.push(state.append("tool.finished", { callId, status: "unknown", message: "the runtime restarted with the call open; it is never re-sent" }).committed);
  }
  for (const request of state.pendingModelRequests) {
    const origin = (records[request - 1] as Extract<JournalRecord, { type: "model.request" }>).data.origin;
    const error = unknownModelResponse("the runtime restarted during the model call");
    pending.push(state.append("model.response", origin === undefined ? { request, error } : { request, origin, error }).committed);
  }
  for (const r of openEnvironmentRequests(records)) {
    pending.push(state.append("environment.response", { origin: r.data.origin, request: r.sequence, error: { code: "unknown", message: "the runtime restarted during the operation" } }).committed);
  }
  const open = openTurn(records);
  if (open !== undefined && open !== waiting.resumed) {
    const error = { code: "interrupted", message: "the turn was interrupted: the runtime restarted, or another node took the session over, while it ran; it is not resumed (send the message again)", retryable: true };
    pending.push(state.append("turn.failed", { activation: open, error }).committed);
  }
  return pending;
}

type CallStarted = Extract<JournalRecord, { type: "tool.call_started" }>;

/** What of a recovered session waits for a person: calls awaiting approval, and the turn that waits for them. */
export interface Waiting {
  /** Open calls the model asked for that await approval, undecided: they go on waiting. */
  calls: CallStarted[];
  /** The activation of the open turn if it waits for one of `calls` (it goes on, not interrupted). */
  resumed: number | undefined;
  /** Open calls denied whose end was not committed: they end error with this. */
  denied: Map<string, { code: "approval_denied"; message: string }>;
}

/**
 * The open calls of a recovered session that await approval and are still undecided. A nested call
 * (ctx.environments.call) is not among them: its caller, which was running, ends `unknown`, and so
 * does it. An approved call without an end may have been sent: it ends `unknown` like any open call.
 */
export function waitingFor(state: SessionState, records: JournalRecord[]): Waiting {
  const started = new Map<string, CallStarted>();
  const decided = new Map<string, Extract<JournalRecord, { type: "tool.approval_decided" }>>();
  for (const r of records) {
    if (r.type === "tool.call_started" && r.data.approval !== undefined && r.data.origin === undefined && state.openCalls.has(r.data.callId) && state.created.tools.some((t) => t.contract.name === r.data.tool)) {
      started.set(r.data.callId, r);
    }
    else if (r.type === "tool.approval_decided") decided.set(r.data.callId, r);
  }
  const calls: CallStarted[] = [];
  const denied = new Map<string, { code: "approval_denied"; message: string }>();
  for (const [callId, r] of started) {
    const d = decided.get(callId);
    if (d === undefined) calls.push(r);
    else if (d.data.decision === "deny") denied.set(callId, denialError(d.data.decidedBy, d.data.reason));
  }
  const open = openTurn(records);
  const resumed = open !== undefined && calls.some((c) => c.data.activation === open) ? open : undefined;
  return { calls, resumed, denied };
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
