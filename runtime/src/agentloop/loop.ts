import type { ErrorInfo, TerminalStatus } from "@aexhq/brain-protocol";
import type { Dispatcher, CallRequest, CallOwner } from "../dispatch/dispatcher.ts";
import type { ToolCall, CommitKind } from "../dispatch/call.ts";
import { WakeBatcher } from "../dispatch/wake.ts";
import type { SessionCalls } from "../dispatch/session-calls.ts";
import type { SessionState } from "../journal/session.ts";
import type { ModelProvider } from "../models/provider.ts";
import { journaledModelCall } from "../models/journaled-call.ts";
import { BrainRuntimeError, toErrorInfo } from "../errors.ts";
import type { ConversationCache } from "./conversation-cache.ts";
import { findTurnEnd, turnEndOf } from "./turn-end.ts";
import type { TurnEnd } from "./turn-end.ts";
import { messageOf } from "../logger.ts";
import type { Logger } from "../logger.ts";
import { SpanKind } from "../telemetry/telemetry.ts";
import type { Span } from "../telemetry/telemetry.ts";

export type { TurnEnd };

/**
 * The default Agentloop of one session: user message → model → tool calls → results → model …
 * until the model answers without tool calls. After a step's tool calls it calls the model again
 * once every call of the step has a committed result, return or finish (a call that returned
 * without a result keeps running in the background). Later committed observations (a result, or a
 * finish that tells something new) wake an idle loop into a new turn with cause "wake".
 */
export class Agentloop implements CallOwner {
  private state: "idle" | "model" | "waiting" = "idle";
  /** Bumped at every turn start and cancellation, so stale async steps stop. */
  private turn = 0;
  /**
   * The turn whose end (turn.completed / turn.failed) is admitted and not committed yet: it is over,
   * so a cancellation in that window must not admit a second end (a turn ends once).
   */
  private ending = 0;
  private activation = 0;
  private stepCalls: ToolCall[] = [];
  /** Observations with a sequence up to this were already given to the model (or deliberately skipped). */
  private fedThrough: number;
  /** Requests waiting for a turn end (turnEnd): told when this loop stops running the session. */
  private waiting = new Set<(reason: BrainRuntimeError) => void>();
  /** The session left this loop (deleted, paged out, evicted, shut down): nothing wakes it again. */
  private stopped = false;
  /** Why this loop stopped running the session, once it did (stop with a reason). */
  private stoppedWith: BrainRuntimeError | undefined;
  private wake: WakeBatcher;
  private abort: AbortController | undefined;
  /** The running turn's span (tracing on): the parent of its model and tool calls' spans. */
  turnSpan: Span | undefined;

  constructor(
    private session: SessionState,
    private dispatcher: Dispatcher,
    readonly provider: ModelProvider,
    /** The session's calls and activation budgets (its model calls charge them too). */
    readonly calls: SessionCalls,
    private conversations: ConversationCache,
    /** Where failures the loop survives are logged (a turn's end that was not journaled). */
    private logger: Logger,
  ) {
    this.fedThrough = session.lastSequence;
    this.wake = new WakeBatcher(() => this.pump());
  }

  get running(): boolean {
    return this.state !== "idle";
  }

  /**
   * A turn runs, or one is about to: an observation the model has not seen is committed and its
   * wake (batched, LIMITS.wakeBatchMs) has not fired yet. What the session view reports as
   * `running`, so a client that sees `idle` with no open calls knows no wake turn will follow.
   */
  get busy(): boolean {
    return this.running || (!this.stopped && this.wake.pending && this.session.activation > 0 && this.hasUnfed());
  }

  /**
   * Starts an activation: commits message.user (with the request's idempotency key, if any), then
   * turn.started, then the model call. Its end: `turnEnd(activation, sequence)`.
   */
  send(text: string, idempotencyKey?: string, parent?: Span): { activation: number; sequence: number; committed: Promise<unknown> } {
    if (this.session.deletedAdmitted) throw new BrainRuntimeError("conflict", `session ${this.session.id} is deleted`);
    if (this.running) throw new BrainRuntimeError("conflict", `session ${this.session.id} is running a turn; wait for it or cancel it`);
    const activation = ++this.session.activation;
    const m = this.session.append("message.user", idempotencyKey === undefined ? { text, activation } : { text, activation, idempotencyKey });
    this.beginTurn(activation, "message", parent);
    return { activation, sequence: m.sequence, committed: m.committed };
  }

  /**
   * The first turn end of `activation` committed after sequence `after` (its message.user): read
   * from the journal if it is there, else when it commits. Resolves undefined once `signal` aborts
   * (a wait bound, a client gone); rejects with the reason `stop` was given if this loop stops
   * running the session first (another node took it, the runtime shuts down), so no request waits
   * for a turn end that will never be committed here.
   */
  turnEnd(activation: number, after: number, signal?: AbortSignal): Promise<TurnEnd | undefined> {
    if (this.stoppedWith !== undefined) return Promise.reject(this.stoppedWith);
    return new Promise<TurnEnd | undefined>((resolve, reject) => {
      const done = () => {
        off();
        this.waiting.delete(stopped);
        signal?.removeEventListener("abort", aborted);
      };
      const stopped = (reason: BrainRuntimeError) => {
        done();
        reject(reason);
      };
      const aborted = () => {
        done();
        resolve(undefined);
      };
      // Listening first, then reading what is committed: an end committed while the store is read
      // reaches the listener (and one both see resolves once).
      const off = this.session.onCommit((r) => {
        const end = turnEndOf(r, activation, after);
        if (end === undefined) return;
        done();
        resolve(end);
      });
      if (signal?.aborted) return aborted();
      this.waiting.add(stopped);
      signal?.addEventListener("abort", aborted, { once: true });
      findTurnEnd(this.session, activation, after).then(
        (found) => {
          if (found === undefined) return;
          done();
          resolve(found);
        },
        (e: unknown) => {
          done();
          reject(e);
        },
      );
    });
  }

  /** Called (after commit) for every committed emission of this session's calls; a stopped loop is not woken again. */
  committed(_call: ToolCall, kind: CommitKind, _status?: TerminalStatus): void {
    if (kind !== "event" && !this.stopped) this.wake.notify();
  }

  /** Cancels the running turn: admits turn.failed `cancelled`. */
  cancelTurn(message: string): Promise<unknown> | undefined {
    if (!this.running || this.ending === this.turn) return undefined;
    this.turn++;
    this.abort?.abort();
    const activation = this.activation;
    this.state = "idle";
    this.stepCalls = [];
    const error = { code: "cancelled", message };
    this.endTurnSpan("cancelled", error);
    return this.session.append("turn.failed", { activation, error }).committed;
  }

  /** Observations admitted so far must not wake the loop (they come from a cancellation). */
  skipAdmitted(): void {
    this.fedThrough = this.session.nextSequence - 1;
  }

  /**
   * Stops running the session here. With a `reason` (the session leaves this node's memory: taken
   * over, evicted, shut down, paged out), requests waiting for a turn end get it at once; without
   * (deletion, whose cancellation still commits the turn's end), they wait for that end.
   */
  stop(reason?: BrainRuntimeError): void {
    this.stopped = true;
    this.turn++;
    this.abort?.abort();
    this.wake.stop();
    this.state = "idle";
    this.endTurnSpan("stopped");
    if (reason === undefined) return;
    this.stoppedWith = reason;
    for (const w of [...this.waiting]) w(reason);
  }

  private beginTurn(activation: number, cause: "message" | "wake", parent?: Span): void {
    this.state = "model";
    this.activation = activation;
    const turn = ++this.turn;
    const telemetry = this.dispatcher.telemetry;
    if (telemetry?.tracing) {
      this.endTurnSpan("stopped");
      this.turnSpan = telemetry.span("brain.turn", parent, { "brain.session.id": this.session.id, "brain.activation": activation, "brain.turn.cause": cause }, SpanKind.INTERNAL);
      telemetry.turnStarted(this.session.id, this.turnSpan);
    }
    // The model sees only committed records, so the request waits for message.user/turn.started.
    const started = this.session.append("turn.started", { activation, cause }).committed;
    void this.callModel(turn, started);
  }

  private pump(): void {
    if (this.session.deletedAdmitted) return;
    if (this.state === "waiting" && this.stepCalls.every((c) => c.settled)) {
      this.state = "model";
      void this.callModel(this.turn);
    } else if (this.state === "idle" && this.session.activation > 0 && this.hasUnfed()) {
      this.beginTurn(this.session.activation, "wake");
    }
  }

  private hasUnfed(): boolean {
    return this.session.lastObservation > this.fedThrough;
  }

  /** Nothing running, nothing pending, nothing the model has not seen: the session may page out. */
  get settled(): boolean {
    return this.state === "idle" && !this.wake.pending && !this.hasUnfed();
  }

  private async callModel(turn: number, after?: Promise<unknown>): Promise<void> {
    const session = this.session;
    const activation = this.activation;
    const live = () => this.turn === turn && !session.deletedAdmitted;
    try {
      if (after) await after;
      if (!live()) return;
      // The request is the conversation through the last committed record; the journal names that
      // range instead of copying it, and the messages are built only if the provider reads them.
      const through = session.lastSequence;
      this.fedThrough = through;
      const spec = { record: { conversation: { through } }, request: () => this.conversations.request(session, through) };
      this.abort = new AbortController();
      const reply = await journaledModelCall(session, this.provider, spec, { budget: this.calls.allowance(activation).models, signal: this.abort.signal, logger: this.logger, telemetry: this.dispatcher.telemetry, parent: this.turnSpan });
      if (!live() || reply.status === "interrupted") return;
      if (reply.status === "error") return await this.fail(turn, activation, reply.error);
      const calls = reply.result.toolCalls;
      if (calls.length === 0) {
        this.ending = turn;
        await session.append("turn.completed", { activation, text: reply.result.text }).committed;
        if (this.turn === turn) this.endTurnSpan("completed");
        return this.end(turn);
      }
      const requests: CallRequest[] = [];
      for (const c of calls) {
        const tool = session.created.tools.find((t) => t.contract.name === c.name);
        if (tool === undefined) {
          return await this.fail(turn, activation, { code: "invalid_request", message: `the model asked for tool ${c.name}, which is not placed in this session` });
        }
        const relative = reply.hints.deadlineMs?.[c.id] ?? session.created.deadlineMs ?? 0;
        requests.push({ modelCallId: c.id, tool, input: c.input, deadlineAt: relative > 0 ? Date.now() + relative : null });
      }
      this.state = "waiting";
      this.stepCalls = this.dispatcher.start(session, activation, requests, this);
    } catch (e) {
      if (live()) {
        await this.fail(turn, activation, toErrorInfo(e)).catch((failed: unknown) => {
          this.logger.error("a turn's failure could not be journaled; the turn stays open until the session is recovered", { sessionId: session.id, activation, error: messageOf(e), journal: messageOf(failed) });
        });
      }
    }
  }

  private async fail(turn: number, activation: number, error: ErrorInfo): Promise<void> {
    this.ending = turn;
    await this.session.append("turn.failed", { activation, error }).committed;
    // The turn's end is the session's (its client reads it); the operator hears of it too.
    this.logger.info("a turn failed", { sessionId: this.session.id, activation, code: error.code, error: error.message });
    if (this.turn === turn) this.endTurnSpan("failed", error);
    this.end(turn);
  }

  /** Ends the running turn's span (if any) with how the turn ended. */
  private endTurnSpan(status: "completed" | "failed" | "cancelled" | "stopped", error?: ErrorInfo): void {
    const span = this.turnSpan;
    if (span === undefined) return;
    this.turnSpan = undefined;
    const telemetry = this.dispatcher.telemetry!;
    telemetry.turnEnded(this.session.id, span);
    span.setAttribute("brain.turn.status", status);
    if (error !== undefined) telemetry.fail(span, error.code, error.message);
    span.end();
  }

  /** The turn's end is committed (waiting requests read it from the commit): the loop is idle. */
  private end(turn: number): void {
    if (this.turn !== turn) return;
    this.state = "idle";
    this.stepCalls = [];
    // Observations that arrived during the last model call wake the loop again.
    this.pump();
  }
}
