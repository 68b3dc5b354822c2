import { createHash } from "node:crypto";
import { canonicalJson } from "@aexhq/brain-protocol";
import type { JournalRecord, Placement, PlacedTool, TerminalStatus } from "@aexhq/brain-protocol";
import type { CallHandle, Environment, EnvironmentControlHandler } from "./environment.ts";
import type { SessionState, RecordData } from "../journal/session.ts";
import { toErrorInfo } from "../errors.ts";
import type { BrainRuntimeError } from "../errors.ts";
import { limitExceeded } from "../limits/key-limits.ts";
import type { ModelProvider } from "../models/provider.ts";
import { ToolCall } from "./call.ts";
import type { ApprovalDecision, CallInfo, CallServices, CommitKind } from "./call.ts";
import { armDeadline } from "./deadline.ts";
import type { SessionCalls } from "./session-calls.ts";
import { callIdOf } from "../journal/call-id.ts";
import type { Logger } from "../logger.ts";
import { SpanKind } from "../telemetry/telemetry.ts";
import { isoTime } from "../telemetry/iso-time.ts";
import type { Span, Telemetry } from "../telemetry/telemetry.ts";

/** Span names kept (Dispatcher.spanName); past this many distinct tools the cache starts over. */
const SPAN_NAMES = 1000;

export interface CallRequest {
  /** The model's id of the call; absent for a nested call. */
  modelCallId?: string;
  /** A nested call (ctx.environments.call): the callId of the call that started it. */
  origin?: string;
  tool: PlacedTool;
  input: unknown;
  deadlineAt: number | null;
}

/**
 * Who starts calls and hears of their commits: the session's Agentloop (a nested call has its
 * caller's owner). Given with each start, so the dispatcher needs no way back to the sessions.
 */
export interface CallOwner {
  /** The session's model provider: ctx.model of the owner's calls goes to it. */
  readonly provider: ModelProvider;
  /** The session's calls and activation budgets: a started call is held there until its finish is committed. */
  readonly calls: SessionCalls;
  /** After each commit of one of its calls (an event, a result, returned, finished). */
  committed(call: ToolCall, kind: CommitKind, status?: TerminalStatus): void;
  /** The span of the turn running now (tracing on): its calls' spans are its children. */
  readonly turnSpan?: Span | undefined;
}

/** A call this process no longer holds (finished and forgotten, or from before a restart), as the journal knows it. */
export interface PastCall {
  /**
   * Whether the call was placed on this host (else a frame for it is `forbidden`): a host placement
   * names it; a managed placement is the host process Brain started for the call's binding (`binding`:
   * the session and env that host serves, if it is one).
   */
  placedOn(hostId: string, binding?: HostBinding): boolean;
}

/** The binding (session and env) a host process Brain started serves. */
export interface HostBinding {
  sessionId: string;
  env: string;
}

/** Finds a past call in the journal: undefined when no such call was ever started. */
export type PastCallLookup = (callId: string) => Promise<PastCall | undefined>;

/** Where a held call is found by its id: through its session (sessions/residency.ts). */
export interface CallDirectory {
  call(callId: string): ToolCall | undefined;
  /** Every call held, over all sessions (close disarms their deadlines). */
  calls(): Iterable<ToolCall>;
}

/**
 * Starts tool calls: commits tool.call_started, then hands the call to its placement's
 * Environment exactly once, and owns the runtime-side terminal causes (deadline, cancel).
 * It holds no call itself: a call is held by its session (SessionCalls, given by its owner) until
 * its tool.finished is committed (every earlier record of it is then committed too); after that
 * only the journal knows it, through `pastCall`, so a long-running server holds only its open calls.
 */
export class Dispatcher {
  private closing = false;
  /** Calls in flight here per API key (the owner of their session): started and their finish not committed. */
  private inFlight = new Map<string, Set<string>>();
  /** A key's calls-in-flight limit (limits/); unset: nothing is limited. */
  callsLimit: ((owner: string) => number | undefined) | undefined;
  /** Shared by every call: Environment control once a plugin installs it. */
  private services: CallServices;
  /**
   * `execute_tool <tool>` by tool name (tracing on): one string per tool, where a template per call
   * made a new concatenation that the span encoder then had to flatten (bench §15). Bounded: tool
   * names are the sessions' own.
   */
  private readonly spanNames = new Map<string, string>();

  constructor(
    private environments: ReadonlyMap<Placement["kind"], Environment>,
    /** The sessions' calls (the residency of the sessions running here). */
    private directory: CallDirectory,
    private pastCall: PastCallLookup,
    /** Where failures the dispatcher and its calls survive are logged (the runtime's one logger). */
    readonly logger: Logger,
    /** Metrics and spans of calls, turns and model calls (the Agentloop reads it here too). */
    readonly telemetry?: Telemetry,
  ) {
    this.services = { control: undefined, logger, telemetry };
  }

  /** ctx.environments for host calls; installed by environments/control/plugin.ts (undefined: `unsupported`). */
  set environmentControl(control: EnvironmentControlHandler | undefined) {
    this.services.control = control;
  }

  environment(kind: Placement["kind"]): Environment | undefined {
    return this.environments.get(kind);
  }

  /** A call this process still holds: started and not yet forgotten. */
  getCall(callId: string): ToolCall | undefined {
    return this.directory.call(callId);
  }

  /** A call that is no longer held but exists in the journal (so it is finished). */
  async findPastCall(callId: string): Promise<PastCall | undefined> {
    return this.directory.call(callId) !== undefined ? undefined : this.pastCall(callId);
  }

  /**
   * Admits every call's tool.call_started now (one group commit) and, after its commit, arms its
   * deadline and dispatches it, unless its tool is placed with `approval`: such a call is journaled
   * with the digest of its input and waits, its deadline running, for `decide`.
   */
  start(session: SessionState, activation: number, requests: CallRequest[], owner: CallOwner): ToolCall[] {
    const key = session.created.owner;
    return requests.map((req) => {
      const data: RecordData<"tool.call_started"> = {
        callId: callIdOf(session.id, session.nextSequence),
        tool: req.tool.contract.name,
        input: req.input as never,
        placement: req.tool.placement,
        activation,
        deadlineAt: req.deadlineAt,
      };
      if (req.modelCallId !== undefined) data.modelCallId = req.modelCallId;
      if (req.origin !== undefined) data.origin = req.origin;
      // The digest of the input as journaled (redacted), which is what a decider reads.
      if (req.tool.approval === "always") data.approval = { inputDigest: inputDigestOf(session.redact(req.input)) };
      const { sequence, committed } = session.append("tool.call_started", data);
      // The sequence just admitted is the one the call id was made with. (Optional fields set
      // after, not spread into the literal: spreads made two objects more on every call.)
      const info: CallInfo = { callId: data.callId, sequence, activation, modelCallId: req.modelCallId, tool: req.tool, input: req.input, deadlineAt: req.deadlineAt };
      if (req.origin !== undefined) info.origin = req.origin;
      if (data.approval !== undefined) info.approval = data.approval;
      const call = this.hold(session, owner, info);
      // Over its key's calls-in-flight limit the call is journaled and ends error/limit_exceeded at
      // once, never reaching its tool: the model (and the journal's reader) learns why.
      const refused = this.admitCall(key, call.callId);
      committed.then(
        () => {
          if (refused !== undefined) return void call.terminate("error", { error: refused.toInfo() });
          this.arm(call);
          if (!call.awaitingApproval) void this.dispatch(call);
        },
        () => void call.terminate("error", { error: { code: "internal", message: "tool.call_started was not committed" } }),
      );
      return call;
    });
  }

  /** A tool call's span: under its turn's, or under its caller's (a nested call); the attributes say where it runs. */
  private callSpan(call: ToolCall, sessionId: string, req: CallInfo, owner: CallOwner): Span | undefined {
    const placement = req.tool.placement as { kind: string; hostId?: string; env?: string; url?: string };
    // Every attribute the span can have, declared at once (an absent one undefined, which no
    // encoder writes): one object of one shape, where adding them one by one grew it per call,
    // and the status set at the end overwrites a property instead of adding one.
    const attributes: Record<string, string | undefined> = {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": req.tool.contract.name,
      "brain.session.id": sessionId,
      "brain.call.id": call.callId,
      "brain.placement.kind": placement.kind,
      "gen_ai.tool.call.id": req.modelCallId,
      "brain.host.id": placement.hostId,
      "brain.environment": placement.env,
      "brain.call.deadline_at": req.deadlineAt === null ? undefined : isoTime(req.deadlineAt),
      "brain.call.status": undefined,
    };
    const parent = req.origin !== undefined ? this.directory.call(req.origin)?.span : owner.turnSpan;
    // Its start is the call's own performance.now() reading (ToolCall.startedAt, which the API reads
    // as such), and finish ends it with the reading the duration metric takes: one clock read each, not two.
    const span = this.telemetry!.span(this.spanName(req.tool.contract.name), parent, attributes, SpanKind.INTERNAL, call.startedAt);
    this.telemetry!.callTraced(sessionId, call.callId, span);
    return span;
  }

  private spanName(tool: string): string {
    let name = this.spanNames.get(tool);
    if (name === undefined) {
      if (this.spanNames.size >= SPAN_NAMES) this.spanNames.clear();
      // Flattened once here (a concatenation is a tree of its parts until something reads it whole).
      name = `execute_tool ${tool}`;
      name.charCodeAt(0);
      this.spanNames.set(tool, name);
    }
    return name;
  }

  /**
   * Holds again a call that awaits approval, from its committed tool.call_started (recovery after a
   * restart or a takeover: nothing of it was sent, so it goes on waiting). Its deadline is armed
   * again (one already passed ends it `timeout` at once). Undefined when the session no longer
   * places its tool (nothing to dispatch it to).
   */
  restore(session: SessionState, started: Extract<JournalRecord, { type: "tool.call_started" }>, owner: CallOwner): ToolCall | undefined {
    const d = started.data;
    const tool = session.created.tools.find((t) => t.contract.name === d.tool);
    if (tool === undefined || d.approval === undefined) return undefined;
    const call = this.hold(session, owner, {
      callId: d.callId,
      sequence: started.sequence,
      activation: d.activation,
      modelCallId: d.modelCallId,
      ...(d.origin !== undefined ? { origin: d.origin } : {}),
      tool,
      input: d.input,
      deadlineAt: d.deadlineAt,
      approval: d.approval,
    });
    this.arm(call);
    return call;
  }

  /**
   * A decision on a call that awaits approval (ToolCall.decide: `conflict` when it awaits none,
   * `digest_mismatch` for another input). An approved call is dispatched once its decision is
   * committed (exactly once: a call is decided at most once); a denied one ends `approval_denied`.
   * Resolves with the decision's sequence.
   */
  async decide(call: ToolCall, decision: ApprovalDecision): Promise<number> {
    const sequence = await call.decide(decision);
    if (decision.decision === "approve") void this.dispatch(call);
    return sequence;
  }

  /** A new ToolCall of `owner`'s session, held by it (SessionCalls) until its tool.finished is committed. */
  private hold(session: SessionState, owner: CallOwner, info: CallInfo): ToolCall {
    const call: ToolCall = new ToolCall(info, session, owner.calls.allowance(info.activation), this.services, owner, (c, kind, r) => {
      owner.committed(c, kind, r.status);
      if (kind === "finished") {
        owner.calls.forget(c);
        this.landed(session.created.owner, c.callId);
      }
    });
    owner.calls.add(call);
    if (this.telemetry?.tracing) call.span = this.callSpan(call, session.id, info, owner);
    return call;
  }

  /** Arms the call's deadline (from its intent's commit: a call awaiting approval spends it waiting). */
  private arm(call: ToolCall): void {
    if (call.info.deadlineAt === null || call.finished) return;
    call.disarm = armDeadline(call.info.deadlineAt, () => {
      const message = call.awaitingApproval ? "the call's deadline passed while it awaited approval" : "the call's deadline passed";
      void call.terminate("timeout", { message });
    });
  }

  /** Counts a call of `key` in flight, or answers the refusal when the key is at its limit. */
  private admitCall(key: string | undefined, callId: string): BrainRuntimeError | undefined {
    if (key === undefined) return undefined;
    const max = this.callsLimit?.(key);
    let calls = this.inFlight.get(key);
    if (max !== undefined && (calls?.size ?? 0) >= max) return limitExceeded("callsInFlight", max, calls?.size ?? 0, `tool call ${callId} not started`);
    if (calls === undefined) this.inFlight.set(key, (calls = new Set()));
    calls.add(callId);
    return undefined;
  }

  /** A call of `key` is no longer in flight here (its finish committed, or it was let go of). */
  private landed(key: string | undefined, callId: string): void {
    if (key === undefined) return;
    const calls = this.inFlight.get(key);
    if (calls?.delete(callId) && calls.size === 0) this.inFlight.delete(key);
  }

  /** Calls of the key in flight on this node (tests and the bench look). */
  callsInFlight(key: string): number {
    return this.inFlight.get(key)?.size ?? 0;
  }

  private dispatch(call: ToolCall): void {
    if (this.closing || call.finished) return;
    const env = this.environments.get(call.info.tool.placement.kind);
    let started: CallHandle | Promise<CallHandle>;
    try {
      if (!env) throw new Error(`no ${call.info.tool.placement.kind} environment`);
      started = env.start(call.invocation(), call);
    } catch (e) {
      this.startFailed(call, e);
      return;
    }
    // An Environment that answers with its handle at once (MCP, HTTP, descriptors) is not awaited: no
    // async function's promise and no microtask per call for it.
    if (typeof (started as Partial<PromiseLike<CallHandle>>).then === "function") {
      (started as PromiseLike<CallHandle>).then(
        (handle) => this.started(call, handle),
        (e: unknown) => this.startFailed(call, e),
      );
    } else this.started(call, started as CallHandle);
  }

  private started(call: ToolCall, handle: CallHandle): void {
    call.handle = handle;
    // A cause that landed while the Environment was starting still has to stop it.
    try {
      if (call.finished && call.finishedCommitted && call.terminal !== "ok") handle.stop(call.terminal!);
    } catch (e) {
      this.startFailed(call, e);
    }
  }

  private startFailed(call: ToolCall, e: unknown): void {
    void call.terminate("error", { error: toErrorInfo(e) });
  }

  /** Cancels open calls; returns the ids this request ended (terminal ones keep their first cause). */
  async cancel(calls: ToolCall[], status: "cancelled" = "cancelled"): Promise<string[]> {
    const ended = await Promise.all(calls.map(async (c) => ((await c.terminate(status, { message: "cancelled by request" })) ? c.callId : undefined)));
    return ended.filter((x): x is string => x !== undefined);
  }

  /**
   * Lets go of an open call without writing its end: its session is run by another node now, which
   * ends it (`unknown`, after a takeover). Its deadline is disarmed and its Environment stops
   * tracking it (no cancel is sent: whether the call is cancelled is not this node's to say).
   */
  abandon(call: ToolCall): void {
    call.span?.setAttribute("brain.call.status", "abandoned");
    call.span?.end();
    call.disarm?.();
    call.owner.calls.forget(call);
    this.landed(call.owner.calls.session.created.owner, call.callId);
    call.handle?.stop("unknown");
  }

  close(): void {
    this.closing = true;
    for (const c of this.directory.calls()) c.disarm?.();
  }
}

/** The approval digest of a call's input (ToolCallStartedRecord `approval.inputDigest`): SHA-256 of its RFC 8785 form, as @aexhq/brain-protocol's `inputDigest` computes it. */
export function inputDigestOf(input: unknown): string {
  return createHash("sha256").update(canonicalJson(input)).digest("hex");
}
