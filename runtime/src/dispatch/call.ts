import type { Decider, EnvironmentAnswer, EnvironmentRequest, ErrorInfo, ModelRequest, ModelResult, Outcome, PlacedTool, TerminalStatus, ToolFinishedRecord } from "@aexhq/brain-protocol";
import type { CallHandle, CallInvocation, CallSink, EnvironmentControlHandler } from "./environment.ts";
import type { RecordData, SessionState } from "../journal/session.ts";
import { BrainRuntimeError, CallRejectedError } from "../errors.ts";
import { checkOutcome } from "./outcome.ts";
import { utf8Bytes } from "./budget.ts";
import type { EmissionBudget } from "./budget.ts";
import type { ModelCallBudget } from "../models/budget.ts";
import { validate, issues } from "@aexhq/brain-protocol";
import type { CallOwner } from "./dispatcher.ts";
import { journaledModelCall } from "../models/journaled-call.ts";
import { messageOf } from "../logger.ts";
import type { Logger } from "../logger.ts";
import type { Span, Telemetry } from "../telemetry/telemetry.ts";

/** What a call may spend: its activation's budgets (one object per activation, shared by its calls). */
export interface CallAllowance {
  budget: EmissionBudget;
  models: ModelCallBudget;
}

export type CommitKind = "event" | "result" | "returned" | "finished";

/** What every call of a dispatcher shares (one object, no per-call closures on the hot path). */
export interface CallServices {
  /** Environment control, when installed (environments/control/). */
  control: EnvironmentControlHandler | undefined;
  /** The runtime's logger: a record of a call the journal did not commit is logged here (once, by the call). */
  logger: Logger;
  /** Metrics and spans (telemetry/): every call is counted when it finishes, and traced when tracing is on. */
  telemetry: Telemetry | undefined;
}

export interface CallInfo {
  callId: string;
  sequence: number;
  activation: number;
  /** The model's id of this call; absent for a nested call (`origin`). */
  modelCallId: string | undefined;
  /** The callId of the call that started this one through ctx.environments.call. */
  origin?: string;
  tool: PlacedTool;
  input: unknown;
  deadlineAt: number | null;
  /** The call waits for an approval before dispatch: the digest of its input as journaled (tool.call_started `approval`). */
  approval?: { inputDigest: string };
}

/** A decision on a call that awaits approval, as the runtime authenticated its maker. */
export interface ApprovalDecision {
  decision: "approve" | "deny";
  /** The digest the decider names: it must be the call's own `approval.inputDigest`. */
  inputDigest: string;
  decidedBy: Decider;
  reason?: string;
}

/**
 * One tool call: the per-call ordering and terminal rules. A record is admitted (sequence
 * allocated) synchronously when the frame arrives, so finish always follows every earlier
 * admitted emission in the journal and in acknowledgement order; once a terminal record is
 * admitted, everything else is rejected with `call_finished`.
 */
export class ToolCall implements CallSink {
  /** Status of the admitted tool.finished, the first terminal cause. */
  terminal: TerminalStatus | undefined;
  handle: CallHandle | undefined;
  /** Committed state, which the Agentloop reads. */
  settled = false;
  resultCommitted = false;
  finishedCommitted = false;
  private returnedAdmitted = false;
  /** The admitted decision on its approval, if it awaited one and was decided (at most one). */
  decision: ApprovalDecision | undefined;
  disarm: (() => void) | undefined;
  /** ctx.model and ctx.environments requests in flight (created on the first): completion, deadline and cancellation stop them. */
  private inFlight: Set<AbortController> | undefined;
  /** The outcome of the last committed tool.result (as journaled, so redacted). */
  private lastResult: Outcome | undefined;
  /** The terminal record's detail, kept for outcome(). */
  private terminalDetail: { error?: ErrorInfo; message?: string } | undefined;
  /** Waiters for outcome() (a nested call's caller), created on the first. */
  private outcomeWaiters: Array<(o: Outcome) => void> | undefined;
  /** performance.now() when tool.call_started was admitted: the duration metric's start. */
  readonly startedAt = performance.now();
  /** The call's span (telemetry.ts), when tracing is on; ends when tool.finished is committed. */
  span: Span | undefined;

  constructor(
    readonly info: CallInfo,
    private session: SessionState,
    private allowance: CallAllowance,
    /** Shared by every call of the dispatcher. */
    private services: CallServices,
    /** Who started it (its session's Agentloop): the model provider of ctx.model, and a nested call's owner too. */
    readonly owner: CallOwner,
    private onCommitted: (call: ToolCall, kind: CommitKind, record: { sequence: number; status?: TerminalStatus }) => void,
  ) {}

  get callId(): string {
    return this.info.callId;
  }
  get finished(): boolean {
    return this.terminal !== undefined;
  }
  /** Waiting for an approval: nothing is dispatched until one is committed. */
  get awaitingApproval(): boolean {
    return this.info.approval !== undefined && this.decision === undefined && this.terminal === undefined;
  }

  /**
   * Admits the decision on the approval this call awaits (`tool.approval_decided`), and for a denial
   * its end right behind it (error `approval_denied`, the reason in the message the model reads).
   * Checked and admitted in one synchronous step, so of two decisions the second is `conflict`, and
   * one that races the deadline or a cancellation either lands before that end or is refused.
   * Resolves with the decision's sequence once it is committed; the caller dispatches an approved call.
   */
  decide(d: ApprovalDecision): Promise<number> {
    const { approval } = this.info;
    if (approval === undefined) throw new BrainRuntimeError("conflict", `call ${this.callId} awaits no approval: its tool ${this.info.tool.contract.name} is not placed with approval`, { state: "no_approval" });
    if (this.decision !== undefined) {
      throw new BrainRuntimeError("conflict", `call ${this.callId} was already decided (${this.decision.decision}); a decision is made once`, { state: "decided", decision: this.decision.decision, decidedBy: this.decision.decidedBy });
    }
    if (this.terminal !== undefined) throw new BrainRuntimeError("conflict", `call ${this.callId} already ended (${this.terminal}) while it awaited approval; it can no longer be decided`, { state: "ended", status: this.terminal });
    if (d.inputDigest !== approval.inputDigest) {
      throw new BrainRuntimeError("digest_mismatch", `the decision names input digest ${d.inputDigest}, but call ${this.callId} awaits approval of input digest ${approval.inputDigest}: decide on the input the call's tool.call_started holds`, { expected: approval.inputDigest, got: d.inputDigest });
    }
    this.decision = d;
    const data: RecordData<"tool.approval_decided"> = { callId: this.callId, decision: d.decision, inputDigest: d.inputDigest, decidedBy: d.decidedBy };
    if (d.reason !== undefined) data.reason = d.reason;
    const { committed } = this.session.append("tool.approval_decided", data);
    if (d.decision === "deny") {
      this.admitTerminal("error", { error: denialError(d.decidedBy, d.reason) }).catch(() => {
        // Handled: a failed commit of tool.finished is logged by admitTerminal (ToolCall.uncommitted).
      });
    }
    return committed.then((r) => r.sequence, (e: unknown) => this.uncommitted("tool.approval_decided", e));
  }

  invocation(): CallInvocation {
    const { callId, sequence, tool, input, deadlineAt } = this.info;
    const traceparent = this.services.telemetry?.traceparent(this.span);
    return traceparent === undefined ? { callId, sessionId: this.session.id, sequence, tool, input, deadlineAt } : { callId, sessionId: this.session.id, sequence, tool, input, deadlineAt, traceparent };
  }

  private guard(): void {
    if (this.terminal !== undefined) throw new CallRejectedError("call_finished", `call ${this.callId} already finished (${this.terminal})`);
  }

  /**
   * A session of a key at its journal-bytes limit journals no more events: the emit is refused
   * (`rejected` limit_exceeded, the call goes on); its results and finish are always journaled, so
   * no call is left open by the limit.
   */
  private withinJournalBytes(): void {
    try {
      this.session.checkJournalBytes(`emit of call ${this.callId} refused`);
    } catch (e) {
      if (e instanceof BrainRuntimeError) throw CallRejectedError.of(e.toInfo(), e);
      throw e;
    }
  }

  /** Over budget: the emission is refused and the call ends as error/budget_exceeded (decided: both). */
  private charge(bytes: number): void {
    const budget = this.allowance.budget;
    if (budget.take(bytes)) return;
    const error = { code: "budget_exceeded", message: `emission of ${bytes} bytes exceeds the activation's BRAIN_MAX_EMITTED_BYTES (${budget.used}/${budget.max} used)` };
    void this.terminate("error", { error });
    throw new CallRejectedError("budget_exceeded", error.message);
  }

  async emit(kind: string, data: unknown): Promise<number> {
    this.guard();
    this.withinJournalBytes();
    this.charge(utf8Bytes(JSON.stringify(data)));
    const { committed } = this.session.append("tool.event", { callId: this.callId, kind, data: data as never });
    const r = await committed.catch((e: unknown) => this.uncommitted("tool.event", e));
    this.onCommitted(this, "event", r);
    return r.sequence;
  }

  async emitResult(raw: unknown, content?: string): Promise<number> {
    this.guard();
    const { outcome, valid } = checkOutcome(raw);
    const result = this.admitResult(outcome, content);
    if (outcome.status !== "ok") {
      this.admitTerminal(outcome.status, terminalDetail(outcome)).catch(() => {
        // Handled: a failed commit of tool.finished is logged by admitTerminal (ToolCall.uncommitted).
      });
    }
    const r = await result;
    if (!valid) throw invalidOutput();
    return r;
  }

  async returned(): Promise<number> {
    this.guard();
    if (this.returnedAdmitted) throw new CallRejectedError("conflict", `call ${this.callId} already returned`);
    this.returnedAdmitted = true;
    const { committed } = this.session.append("tool.returned", { callId: this.callId });
    const r = await committed.catch((e: unknown) => this.uncommitted("tool.returned", e));
    this.settled = true;
    this.onCommitted(this, "returned", r);
    return r.sequence;
  }

  // Not an async function: a valid finish (every call makes one) answers with tool.finished's own
  // commit, without a promise and a suspended frame of its own; a throw is still a rejection.
  finish(raw?: unknown, content?: string): Promise<number> {
    try {
      this.guard();
      let status: TerminalStatus = "ok";
      let detail = NO_DETAIL;
      let valid = true;
      if (raw !== undefined) {
        const checked = checkOutcome(raw);
        valid = checked.valid;
        this.admitResult(checked.outcome, content).catch(() => {
          // Handled: a failed commit of tool.result is logged by admitResult (ToolCall.uncommitted).
        });
        status = checked.outcome.status;
        detail = terminalDetail(checked.outcome);
      }
      const finished = this.admitTerminal(status, detail);
      return valid ? finished : finished.then(() => Promise.reject(invalidOutput()));
    } catch (e) {
      return Promise.reject(e as Error);
    }
  }

  /**
   * ctx.model / brain:tool/host.model: the session's model with the tool's explicit request, charged
   * to the activation that started the call, journaled with `origin` = this call. A refusal, a
   * provider error or an interruption rejects (the call itself goes on); nothing is ever retried.
   */
  async model(request: ModelRequest): Promise<ModelResult> {
    this.guard();
    if (!validate.ModelRequest.Check(request)) throw new CallRejectedError("invalid_request", "the model request is not a valid ModelRequest", issues("ModelRequest", request));
    const provider = this.owner.provider;
    const abort = new AbortController();
    (this.inFlight ??= new Set()).add(abort);
    try {
      const spec = { record: { request, origin: this.callId }, request: async () => request };
      const out = await journaledModelCall(this.session, provider, spec, { origin: this.callId, budget: this.allowance.models, signal: abort.signal, logger: this.services.logger, telemetry: this.services.telemetry, parent: this.span });
      if (out.status === "ok") return out.result;
      if (out.status === "error") throw CallRejectedError.of(out.error);
      throw new CallRejectedError("call_finished", `call ${this.callId} ended (${this.terminal ?? "stopped"}) during its model call; the model call's outcome is unknown and it is not replayed`);
    } finally {
      this.inFlight?.delete(abort);
    }
  }

  /**
   * ctx.environments: one Environment control operation on behalf of this call, decided by its
   * placement's authority (environments/control/). The call's end aborts it (a nested call it
   * started is cancelled) and it is answered `call_finished`.
   */
  async environment(request: EnvironmentRequest): Promise<EnvironmentAnswer> {
    this.guard();
    const control = this.services.control;
    if (control === undefined) throw new CallRejectedError("unsupported", "this runtime has no Environment control");
    const abort = new AbortController();
    (this.inFlight ??= new Set()).add(abort);
    try {
      const { callId, activation, tool, deadlineAt } = this.info;
      return await control({ callId, session: this.session, activation, placement: tool.placement, deadlineAt, signal: abort.signal, owner: this.owner }, request);
    } finally {
      this.inFlight?.delete(abort);
    }
  }

  /**
   * The call's Outcome once its tool.finished is committed (what ctx.environments.call answers): for
   * `ok`, the last committed result's outcome when it is a success, else `{status:"ok", value:null}`
   * (finished without a result); otherwise the terminal status with its error or message.
   */
  outcome(): Promise<Outcome> {
    if (this.finishedCommitted) return Promise.resolve(this.finalOutcome());
    return new Promise((resolve) => (this.outcomeWaiters ??= []).push(resolve));
  }

  private finalOutcome(): Outcome {
    const status = this.terminal!;
    const detail = this.terminalDetail ?? {};
    if (status === "ok") return this.lastResult?.status === "ok" ? this.lastResult : { status: "ok", value: null };
    if (status === "error") return { status, error: detail.error ?? { code: "tool_error", message: detail.message ?? "the call ended with an error" } };
    return detail.message === undefined ? { status } : { status, message: detail.message };
  }

  lost(message: string): void {
    void this.terminate("unknown", { message });
  }

  /**
   * A runtime-side terminal cause (timeout, cancellation, connection loss, budget, start failure).
   * Returns false when the call was already terminal: the first cause is kept. After the commit the
   * Environment is told to stop.
   */
  terminate(status: TerminalStatus, detail: { error?: ErrorInfo; message?: string }): Promise<boolean> {
    if (this.terminal !== undefined) return Promise.resolve(false);
    let admitted: Promise<number>;
    try {
      admitted = this.admitTerminal(status, detail);
    } catch {
      // Handled: append throws only for a deleted session, where nothing more is appended.
      return Promise.resolve(false);
    }
    return admitted.then(
      () => {
        this.handle?.stop(status);
        return true;
      },
      () => false,
    );
  }

  private admitResult(outcome: Outcome, content: string | undefined): Promise<number> {
    this.charge(utf8Bytes(JSON.stringify(outcome)) + (content === undefined ? 0 : utf8Bytes(content)));
    const data = content === undefined ? { callId: this.callId, outcome } : { callId: this.callId, outcome, content };
    const { committed } = this.session.append("tool.result", data);
    return committed.then((r) => {
      this.lastResult = r.data.outcome;
      this.resultCommitted = true;
      this.settled = true;
      this.onCommitted(this, "result", r);
      return r.sequence;
    }, (e: unknown) => this.uncommitted("tool.result", e));
  }

  private admitTerminal(status: TerminalStatus, detail: { error?: ErrorInfo; message?: string }): Promise<number> {
    this.terminal = status;
    this.terminalDetail = detail;
    this.disarm?.();
    if (this.inFlight) for (const abort of this.inFlight) abort.abort();
    const data: ToolFinishedRecord["data"] = { callId: this.callId, status };
    if (detail.error !== undefined) data.error = detail.error;
    if (detail.message !== undefined) data.message = detail.message;
    const { committed } = this.session.append("tool.finished", data);
    return committed.then((r) => {
      this.finishedCommitted = true;
      this.settled = true;
      this.observeFinished(status, detail);
      this.onCommitted(this, "finished", { sequence: r.sequence, status });
      if (this.outcomeWaiters !== undefined) {
        const outcome = this.finalOutcome();
        for (const w of this.outcomeWaiters) w(outcome);
        this.outcomeWaiters = undefined;
      }
      return r.sequence;
    }, (e: unknown) => this.uncommitted("tool.finished", e));
  }

  /** Counts the call, and ends its span with the terminal status (telemetry: best-effort, after the commit). */
  private observeFinished(status: TerminalStatus, detail: { error?: ErrorInfo; message?: string }): void {
    if (status !== "ok") this.services.logger.debug("a tool call ended without success", { sessionId: this.session.id, callId: this.callId, tool: this.info.tool.contract.name, status, code: detail.error?.code, error: detail.error?.message ?? detail.message });
    const telemetry = this.services.telemetry;
    if (telemetry === undefined) return;
    const now = performance.now();
    telemetry.metrics.toolCallFinished(this.info.tool.placement.kind, status, (now - this.startedAt) / 1000);
    const span = this.span;
    if (span === undefined) return;
    span.setAttribute("brain.call.status", status);
    if (status === "error") telemetry.fail(span, detail.error?.code ?? "tool_error", detail.error?.message);
    else if (status !== "ok") telemetry.fail(span, status, detail.message);
    span.end(now);
  }

  /**
   * A record of this call the journal did not commit (the store failed or fenced this node off):
   * logged here, once, and rethrown to whoever awaits it, so a caller that drops the rejection (a
   * fire-and-forget finish) drops nothing the operator would need.
   */
  private uncommitted(record: string, e: unknown): never {
    this.services.logger.warn("a tool call's record was not committed to the journal", { callId: this.callId, record, error: messageOf(e) });
    throw e;
  }

}

/** How a denied call ends (its tool.finished error, which the model reads): who denied it and why. */
export function denialError(decidedBy: Decider, reason: string | undefined): { code: "approval_denied"; message: string } {
  const who = decidedBy.kind === "operator" ? "the operator" : `API key ${decidedBy.name ?? decidedBy.keyId} (${decidedBy.keyId})`;
  return { code: "approval_denied", message: `the call was denied by ${who}${reason !== undefined && reason !== "" ? `: ${reason}` : " (no reason given)"}` };
}

/** A terminal record without an error or a message (never written to: one object for every such call). */
const NO_DETAIL: { readonly error?: ErrorInfo; readonly message?: string } = Object.freeze({});

function terminalDetail(outcome: Outcome): { readonly error?: ErrorInfo; readonly message?: string } {
  if (outcome.status === "error") return { error: outcome.error };
  if (outcome.status === "ok") return NO_DETAIL;
  return outcome.message === undefined ? NO_DETAIL : { message: outcome.message };
}

function invalidOutput(): CallRejectedError {
  return new CallRejectedError("invalid_output", "the outcome is not a valid Outcome envelope; the call ended as error/invalid_output");
}
