import type { EnvironmentAnswer, EnvironmentRequest, ErrorInfo, InvokeFrame, ModelRequest, ModelResult, PlacedTool, Placement, TerminalStatus } from "@aexhq/brain-protocol";
import type { SessionState } from "../journal/session.ts";
import type { CallOwner } from "./dispatcher.ts";

/** What an Environment needs to run one call. It is started after tool.call_started is committed. */
export interface CallInvocation {
  callId: string;
  sessionId: string;
  /** Sequence of tool.call_started (ctx.sequence). */
  sequence: number;
  tool: PlacedTool;
  input: unknown;
  /** Absolute deadline, ms since epoch, or null for unlimited. */
  deadlineAt: number | null;
  /** W3C traceparent of the call's span, when the runtime traces (telemetry only, never journaled). */
  traceparent?: string;
}

/** What an out-of-process binding is told about a call: the host `invoke` frame (an HTTP tool's request carries the same fields). */
export function invokeFrame(call: CallInvocation): InvokeFrame {
  return {
    type: "invoke",
    callId: call.callId,
    sessionId: call.sessionId,
    sequence: call.sequence,
    tool: call.tool.contract.name,
    digest: call.tool.contract.digest,
    input: call.input as InvokeFrame["input"],
    options: call.tool.options,
    deadlineAt: call.deadlineAt,
    ...(call.traceparent === undefined ? {} : { traceparent: call.traceparent }),
  };
}

/**
 * How an Environment reports back. Every method resolves with the committed journal sequence, or
 * rejects with a CallRejectedError (`call_finished`, `budget_exceeded`, `invalid_output`, ...).
 * Outcomes are raw JSON: the sink checks the envelope, so Environments need not.
 */
export interface CallSink {
  emit(kind: string, data: unknown): Promise<number>;
  emitResult(outcome: unknown, content?: string): Promise<number>;
  returned(): Promise<number>;
  /** Optionally a last result, then completion; resolves with the tool.finished sequence. */
  finish(outcome?: unknown, content?: string): Promise<number>;
  /** ctx.model / brain:tool/host.model. */
  model(request: ModelRequest): Promise<ModelResult>;
  /**
   * ctx.environments (Environment control), for calls that may have it (host calls). A sink without
   * it (a call relayed from another node) answers `unsupported`.
   */
  environment?(request: EnvironmentRequest): Promise<EnvironmentAnswer>;
  /** The Environment can no longer get a reliable result (connection lost, worker died): → `unknown`. */
  lost(message: string): void;
  /** Whether the call already has a terminal record admitted. */
  readonly finished: boolean;
}

/** The dispatcher's handle on a running call, to stop it. */
export interface CallHandle {
  /** The call ended for the caller (its tool.finished is committed); abort the work. Best-effort. */
  stop(status: TerminalStatus): void;
}

/** One kind of placement (host, component, descriptor, ...). */
export interface Environment {
  readonly kind: Placement["kind"];
  /** Checked at session creation (may be async, e.g. component admission); an ErrorInfo refuses the session. */
  admit(tool: PlacedTool, sessionId: string, owner?: string): ErrorInfo | undefined | Promise<ErrorInfo | undefined>;
  /** Session creation failed after `admit` was called for this tool: undo whatever admit took for the session (creation is all or nothing). */
  release?(tool: PlacedTool, sessionId: string): void;
  /**
   * The session was created with these tools of this kind (session.created is committed): prepare
   * what their calls need, so a call's deadline covers only the call. Session creation answers once
   * this resolves; it never refuses the session (refusals belong to `admit`), and a failure it finds
   * is the calls' to report.
   */
  sessionCreated?(sessionId: string, tools: PlacedTool[], owner?: string): Promise<void> | void;
  /** The session was deleted (its calls already ended): stop and free what its calls used. Awaited before the delete answers. */
  sessionDeleted?(sessionId: string): Promise<void> | void;
  /** Start one call. Throwing (or rejecting) ends the call as `error` with the thrown ErrorInfo; nothing was sent. */
  start(call: CallInvocation, sink: CallSink): CallHandle | Promise<CallHandle>;
  /** Called on server close. */
  close?(): Promise<void> | void;
}

/** The call asking for an Environment control operation, as the controller sees it. */
export interface EnvironmentCaller {
  readonly callId: string;
  readonly session: SessionState;
  /** The activation the call charges: a nested call charges it too. */
  readonly activation: number;
  /** The caller's placement: its `environments` authority, if a host placement grants one. */
  readonly placement: Placement;
  readonly deadlineAt: number | null;
  /** Aborted when the caller's call ends (its terminal record is admitted). */
  readonly signal: AbortSignal;
  /** The caller's owner (its session's Agentloop): a nested call it starts has the same. */
  readonly owner: CallOwner;
}

/**
 * Environment control (environments/control/): journals, authorizes and performs one operation;
 * rejects with a BrainRuntimeError (`forbidden` naming the missing grant, `not_found`, ...).
 */
export type EnvironmentControlHandler = (caller: EnvironmentCaller, request: EnvironmentRequest) => Promise<EnvironmentAnswer>;
