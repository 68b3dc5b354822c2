import { inputDigest } from "@aexhq/brain-protocol";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { SdkError } from "../errors.ts";

/**
 * A tool call that awaits a person's approval before Brain dispatches it (its tool is placed with
 * `approval: "always"`), as its `tool.call_started` record holds it. `session.approve(request)` and
 * `session.deny(request, reason)` decide it; the decision names `inputDigest`, the digest of exactly
 * this `input`, so it cannot be carried over to another call or another input.
 */
export interface PendingApproval {
  readonly sessionId: string;
  readonly callId: string;
  /** The sequence of its `tool.call_started` (the number after the colon in `callId`). */
  readonly sequence: number;
  readonly tool: string;
  /** The input the model gave, as journaled: what the decision approves. */
  readonly input: unknown;
  /** Lowercase hex SHA-256 of the RFC 8785 form of `input`, checked here against `input`. */
  readonly inputDigest: string;
  readonly activation: number;
  /** When the call times out if nobody decides (ms since the epoch), or null for no deadline. */
  readonly deadlineAt: number | null;
  /** The model's id of the call. */
  readonly modelCallId?: string;
}

/**
 * What an `onApprovalRequest` handler answers: `"approve"`, `"deny"`, the decision with a reason, or
 * nothing (`undefined`) to leave the call waiting for someone else (a person on the page, another
 * process) or for its deadline.
 */
export type ApprovalAnswer = "approve" | "deny" | { decision: "approve" | "deny"; reason?: string } | undefined | void;

/** `session.onApprovalRequest(handler)`: called once for every call of the session that awaits approval. */
export type ApprovalHandler = (request: PendingApproval) => ApprovalAnswer | Promise<ApprovalAnswer>;

/** Options of `session.onApprovalRequest`. */
export interface ApprovalHookOptions {
  /** Stops the hook (as the function it returns does). */
  signal?: AbortSignal;
  /**
   * Told of what the hook could not do: a handler that threw or answered something else, a decision
   * the runtime refused (other than `conflict`: someone decided first, or the call ended), a stream
   * that could not be opened again. Default: `console.error`. The hook goes on after each, except
   * after a stream failure, which ends it.
   */
  onError?: (error: unknown, request?: PendingApproval) => void;
}

type CallStarted = Extract<JournalRecord, { type: "tool.call_started" }>;

/**
 * The pending approval a `tool.call_started` record asks for, or undefined when its call needs none.
 * The record's digest is checked against its input: a decision is only ever made on the input shown.
 */
export async function pendingApprovalOf(sessionId: string, r: CallStarted): Promise<PendingApproval | undefined> {
  const d = r.data;
  if (d.approval === undefined) return undefined;
  const computed = await inputDigest(d.input);
  if (computed !== d.approval.inputDigest) {
    throw new SdkError("digest_mismatch", `call ${d.callId}: its approval names input digest ${d.approval.inputDigest}, but its input's digest is ${computed}; refusing to decide on an input other than the one shown`, { callId: d.callId });
  }
  return {
    sessionId,
    callId: d.callId,
    sequence: r.sequence,
    tool: d.tool,
    input: d.input,
    inputDigest: d.approval.inputDigest,
    activation: d.activation,
    deadlineAt: d.deadlineAt,
    ...(d.modelCallId !== undefined ? { modelCallId: d.modelCallId } : {}),
  };
}

/** The decision and reason a handler's answer means; undefined: leave the call waiting. */
export function answerOf(answer: ApprovalAnswer): { decision: "approve" | "deny"; reason?: string } | undefined {
  if (answer === undefined) return undefined;
  if (answer === "approve" || answer === "deny") return { decision: answer };
  if (typeof answer === "object" && answer !== null && (answer.decision === "approve" || answer.decision === "deny")) {
    if (answer.reason !== undefined && typeof answer.reason !== "string") throw new TypeError(`onApprovalRequest: reason must be a string, got ${typeof answer.reason}`);
    return answer.reason === undefined ? { decision: answer.decision } : { decision: answer.decision, reason: answer.reason };
  }
  throw new TypeError(`onApprovalRequest: the handler must answer "approve", "deny", { decision, reason? } or nothing; got ${JSON.stringify(answer)}`);
}

/** A decision target given to approve()/deny(): a PendingApproval (never a bare call id: the decider names the input it saw). */
export function checkedRequest(request: PendingApproval, what: string): PendingApproval {
  if (typeof request !== "object" || request === null || typeof request.callId !== "string" || typeof request.inputDigest !== "string" || !Number.isInteger(request.sequence)) {
    throw new TypeError(`${what}: pass the PendingApproval (from session.pendingApprovals() or onApprovalRequest), which names the input you decide on; got ${JSON.stringify(request)}`);
  }
  return request;
}
