import type { JournalRecord } from "@aexhq/brain-protocol";
import type { SessionState } from "../journal/session.ts";
import { unknownModelResponse } from "../models/journaled-call.ts";

/**
 * What recovery writes for one session with open work, read whole from its records (after a
 * restart, or a takeover by another node), and returns the commits to await. Nothing is resumed or
 * re-sent, because its outcome may be lost:
 * - an open call ends `tool.finished` `unknown`;
 * - an open model request (the Agentloop's or a tool's `ctx.model`) is answered `unknown`;
 * - an open Environment control operation is answered `unknown` (the nested call of a `call`, if
 *   any, is an open call above);
 * - a running turn ends `turn.failed` `interrupted` (retryable: a planned event, not a bug; a new
 *   message runs a new turn).
 */
export function endOpenWork(state: SessionState, records: JournalRecord[]): Promise<unknown>[] {
  const pending: Promise<unknown>[] = [];
  for (const callId of state.openCalls) {
    pending.push(state.append("tool.finished", { callId, status: "unknown", message: "the runtime restarted with the call open; it is never re-sent" }).committed);
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
  if (open !== undefined) {
    const error = { code: "interrupted", message: "the turn was interrupted: the runtime restarted, or another node took the session over, while it ran; it is not resumed (send the message again)", retryable: true };
    pending.push(state.append("turn.failed", { activation: open, error }).committed);
  }
  return pending;
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
