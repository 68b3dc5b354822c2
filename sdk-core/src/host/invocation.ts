import type { EnvironmentAnswer, EnvironmentRequest, InvokeFrame, Outcome, ModelRequest, ModelResult } from "@aexhq/brain-protocol";
import type { z } from "zod";
import type { PlacedToolSpec } from "../tool.ts";
import type { ToolContext, EnvironmentControl } from "../context.ts";
import { plainOutcome, toOutcome, thrownOutcome } from "../outcome.ts";
import { notJsonReason } from "../json.ts";
import { issuesOf } from "../schema.ts";
import { parsesSynchronously } from "../sync-parse.ts";
import { BrainError, SdkError } from "../errors.ts";
import { inRegisteredTrace } from "./trace-context.ts";
import { CallContext, type ContextCalls } from "./call-context.ts";

/** What an invocation needs from its connection: send a frame and await the runtime's answer. */
export interface InvocationChannel {
  /** Sends the frame with a fresh `ref` and resolves with the runtime's `committed`/`model_result`/`environment_result` answer; rejects on `rejected` or connection loss. */
  request(frame: Record<string, unknown> & { type: string; callId: string }): Promise<{ sequence?: number; result?: ModelResult; environment?: EnvironmentAnswer }>;
}

type EndReason = "timeout" | "cancelled" | "unknown";

/** Why a call ended, as the error of a later ctx call says it. */
const ENDED: Record<EndReason, string> = {
  timeout: "its deadline passed (timeout)",
  cancelled: "it was cancelled",
  unknown: "the host connection was lost (its outcome is unknown)",
};

/**
 * The one error of a ctx call made after the call is over, whatever ended it (finish, a non-success
 * result, deadline, cancellation, connection loss, brain.close()): SdkError `call_finished`, the
 * code the runtime answers late frames with too (docs/decisions/sdk.md).
 */
function callOver(what: string, why: string, cause?: unknown): SdkError {
  const e = new SdkError("call_finished", `${what}: the call is over: ${why}; later emissions are rejected`);
  if (cause !== undefined) (e as { cause?: unknown }).cause = cause;
  return e;
}

/** Whether `e` says the call is over (locally, or answered so by the runtime). */
function isOver(e: unknown): boolean {
  return e instanceof BrainError && e.code === "call_finished";
}

const ignore = (): undefined => undefined;

/**
 * One tool call on this host: deadline check, input validation under the deadline, run, and the
 * ordered stream of emissions, results, return and finish. Every outgoing frame goes through one
 * chain so the runtime sees them in the order the tool called them.
 */
export class Invocation {
  /**
   * Created when a tool first reads ctx.signal: most calls never do, and an AbortController per
   * call was a measurable share of a busy host's allocation.
   */
  private controller: AbortController | undefined;
  private endError: SdkError | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  /** Steps enqueued whose promise has not settled yet (the chain waits for them in order). */
  private queued = 0;
  /** finish() was called (or a non-success outcome sent): later emissions are refused locally. */
  private closed = false;
  private ended: EndReason | undefined;
  private endedWhy = "";
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly frame: InvokeFrame,
    private readonly spec: PlacedToolSpec,
    private readonly channel: InvocationChannel,
    private readonly onDone: () => void,
  ) {}

  get callId(): string {
    return this.frame.callId;
  }

  /** The call's deadline (ms since the epoch), or null. */
  get deadlineAt(): number | null {
    return this.frame.deadlineAt;
  }

  /** Aborts local work; the runtime has already decided the call's fate. */
  end(reason: EndReason, why: string = ENDED[reason]): void {
    if (this.ended) return;
    this.ended = reason;
    this.endedWhy = why;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.endError = new SdkError(reason === "unknown" ? "connection_lost" : reason, `the call ended: ${why}`);
    this.controller?.abort(this.endError);
    this.onDone();
  }

  /**
   * brain.close() ends a call still open: `cancelled` (an explicit SDK cancellation), not the
   * `unknown` of a dropped connection. The tool's signal aborts and its later ctx calls reject
   * `call_finished`; the finish frame goes straight out, not behind the tool's queued frames.
   * Resolves once the runtime answered (a call that ended meanwhile is answered call_finished).
   */
  cancelForClose(): Promise<void> {
    if (this.ended || this.closed) return Promise.resolve();
    const message = "the Brain client was closed (brain.close()) before the call finished";
    this.end("cancelled", message);
    return this.channel.request({ type: "finish", callId: this.callId, outcome: { status: "cancelled", message } }).then(() => undefined, () => undefined);
  }

  async start(): Promise<void> {
    const { deadlineAt } = this.frame;
    if (deadlineAt !== null) {
      const remaining = deadlineAt - Date.now();
      // Already expired: stop before validation or customer code.
      if (remaining <= 0) return this.finalize({ status: "timeout", message: "the deadline passed before the call started" });
      this.timer = setTimeout(() => this.end("timeout"), remaining);
    }
    const tool = this.spec.tool;
    // The async parse unless the schema has nothing to await (sync-parse.ts): a sync attempt on a
    // schema with async refinements would leave Zod's dropped refinement promise to reject
    // unhandled (and run the refinement twice).
    const parsed = parsesSynchronously(tool.input) ? tool.input.safeParse(this.frame.input) : await tool.input.safeParseAsync(this.frame.input);
    // The call ended while the check ran (deadline, cancel, connection loss): end() has already
    // settled it with the runtime, so the tool never runs and nothing late is sent.
    if (this.ended) return;
    if (!parsed.success) {
      return this.finalize({ status: "error", error: { code: "invalid_input", message: "input does not match the input schema", details: issuesOf(parsed.error) } });
    }
    let returned: unknown;
    try {
      const context = this.context();
      // The runtime traces this call: the tool's own spans (OpenTelemetry, if the application has it) nest under the call's.
      const { traceparent } = this.frame;
      returned = await (traceparent === undefined ? tool.run!(parsed.data, context) : inRegisteredTrace(traceparent, () => tool.run!(parsed.data, context)));
    } catch (e) {
      if (!this.closed) await this.finalize(thrownOutcome(e));
      return;
    }
    if (this.closed) return;
    if (returned !== undefined) {
      try {
        await this.emitResult(returned);
      } catch (e) {
        // The returned value is the call's one result: refused here for size, the call must still end.
        if (tooLarge(e)) return this.finalize(refusedLocally(e));
      }
    }
    if (this.closed) return;
    await this.enqueue(() => this.channel.request({ type: "returned", callId: this.callId })).catch(() => undefined);
  }

  private signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.endError !== undefined) this.controller.abort(this.endError);
    }
    return this.controller.signal;
  }

  private context(): ToolContext<unknown> {
    // Closures, not methods, so a tool may destructure ctx (`{ emit, finish }`). ctx.environments
    // (seven closures of its own) is made when a tool first reads it: most never do.
    let environments: EnvironmentControl | undefined;
    const calls: ContextCalls = {
      emit: (kind, data) => this.guard("emit", () => this.emit(kind, data)),
      emitResult: (value, opts) => this.guard("emitResult", () => this.emitResult(value, opts)),
      finish: (value, opts) => this.guard("finish", () => this.finish(value, opts)),
      model: (request) => this.guard("model", () => this.model(request)),
    };
    const context = new CallContext(
      this.spec.options,
      this.frame.sessionId,
      this.frame.sequence,
      this.frame.deadlineAt ?? undefined,
      () => this.signal(),
      calls,
      () => (environments ??= this.environments()),
    );
    return context as unknown as ToolContext<unknown>;
  }

  private refuseIfClosed(what: string): void {
    if (this.ended) throw callOver(what, this.endedWhy);
    if (this.closed) throw callOver(what, "it already finished");
  }

  /**
   * A ctx call as the tool sees it: a frame cut off by the end of the call (connection lost,
   * brain.close()) rejects `call_finished` like a call made after the end, and that rejection is
   * never an unhandled one.
   */
  private guard<T>(what: string, step: () => Promise<T>): Promise<T> {
    // A rejection saying the call is over is marked handled before it happens: a tool's background
    // work that emits after the call ended without awaiting (a timer, a stream callback) must not
    // crash the process with an unhandled rejection. Awaiting it still throws, and any other
    // rejection stays as unhandled as usual. (`guarded` is assigned before its handler can run.)
    const guarded: Promise<T> = step().catch((e: unknown) => {
      const error = this.ended && !isOver(e) && !(e instanceof TypeError) ? callOver(what, this.endedWhy, e) : e;
      if (isOver(error)) guarded.catch(ignore);
      throw error;
    });
    return guarded;
  }

  /** `last`: no frame of this call follows (its finish), so nothing will wait for this one in the chain. */
  private enqueue<T>(step: () => Promise<T>, last = false): Promise<T> {
    let next: Promise<T>;
    if (this.queued === 0) {
      // Nothing ahead to wait for: the step runs now (a finish leaves in this tick, not a microtask later).
      try {
        next = step();
      } catch (e) {
        next = Promise.reject(e);
      }
      if (last) return next;
    } else next = this.chain.then(step);
    this.queued += 1;
    this.chain = next.then(this.dequeue, this.dequeue);
    return next;
  }

  private readonly dequeue = (): void => void (this.queued -= 1);

  async emit(kind: string, data: unknown): Promise<number> {
    this.refuseIfClosed("emit");
    if (typeof kind !== "string" || kind === "") throw new TypeError("emit(kind, data): kind must be a non-empty string");
    const reason = notJsonReason(data);
    if (reason) throw new TypeError(`emit(${JSON.stringify(kind)}): data is not JSON: ${reason}`);
    const answer = await this.enqueue(() => this.channel.request({ type: "emit", callId: this.callId, kind, data }));
    return answer.sequence!;
  }

  async emitResult(value: unknown, opts?: { content?: string }): Promise<number> {
    this.refuseIfClosed("emitResult");
    const output = this.spec.tool.output;
    const outcome = output === undefined ? plainOutcome(value) : await this.enqueue(() => toOutcome(value, output));
    if (outcome.status !== "ok") this.closed = true; // a non-success outcome terminates the execution
    const answer = await this.enqueue(() => this.channel.request({ type: "emit_result", callId: this.callId, outcome, ...content(opts) })).catch(async (e: unknown) => {
      // A non-success result ends the call: refused here for size, it is ended with a small finish instead.
      if (outcome.status !== "ok" && tooLarge(e)) await this.enqueue(() => this.channel.request({ type: "finish", callId: this.callId, outcome: refusedLocally(e) })).catch(() => undefined);
      throw e;
    }).finally(() => {
      if (outcome.status !== "ok") this.onDone();
    });
    return answer.sequence!;
  }

  /** `finish()` and `finish(undefined)` both finish without another result. */
  finish(value: unknown, opts: { content?: string } | undefined): Promise<void> {
    // Not an async function: without an output schema the finish frame is sent in this tick and
    // its answer passed on as sendFinish gives it (a promise and a microtask less on every call).
    try {
      this.refuseIfClosed("finish");
      this.closed = true;
      const output = this.spec.tool.output;
      if (value !== undefined && output !== undefined) return this.finishChecked(value, output, opts);
      return this.sendFinish(value === undefined ? undefined : plainOutcome(value), opts);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** A finish with a value and an output schema: the value is checked (parseAsync) first. */
  private async finishChecked(value: unknown, output: z.ZodType, opts: { content?: string } | undefined): Promise<void> {
    await this.sendFinish(await this.enqueue(() => toOutcome(value, output)), opts);
  }

  /** Finish after an SDK-side decision (timeout before start, invalid input, thrown error). */
  private async finalize(outcome: Outcome): Promise<void> {
    this.closed = true;
    await this.sendFinish(outcome, undefined).catch(() => undefined);
  }

  /**
   * Sends the call's finish and settles with the runtime's answer. Not an async function, and the
   * finish is the call's last frame (nothing is enqueued after it): on every call a promise and
   * two microtasks less than awaiting it in the order chain.
   */
  private sendFinish(outcome: Outcome | undefined, opts: { content?: string } | undefined): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    return this.enqueue(() => this.channel.request(finishFrame(this.callId, outcome, opts)), true).then(this.onDone, this.finishRefused);
  }

  /** The finish was refused or lost: one refused here for size would leave the call open until its deadline, so it ends with a small one. */
  private readonly finishRefused = async (e: unknown): Promise<never> => {
    try {
      if (tooLarge(e)) await this.enqueue(() => this.channel.request({ type: "finish", callId: this.callId, outcome: refusedLocally(e) })).catch(() => undefined);
      throw e;
    } finally {
      this.onDone();
    }
  };

  private environments(): EnvironmentControl {
    const ask = (request: EnvironmentRequest) => this.environment(request);
    const name = (op: string, value: unknown): string => {
      if (typeof value !== "string" || value === "") throw new TypeError(`ctx.environments.${op}(name): name must be a non-empty string`);
      return value;
    };
    const object = <T>(op: string, value: T): T => {
      if (typeof value !== "object" || value === null || Array.isArray(value)) throw new TypeError(`ctx.environments.${op}: spec must be an object`);
      return value;
    };
    return Object.freeze({
      list: async () => (await ask({ operation: "list" })).bindings ?? [],
      get: async (n: string) => (await ask({ operation: "get", name: name("get", n) })).binding!,
      create: async (spec) => (await ask({ operation: "create", spec: object("create", spec) })).binding!,
      update: async (n: string, spec) => (await ask({ operation: "update", name: name("update", n), spec: object("update", spec) })).binding!,
      setup: async (n: string) => (await ask({ operation: "setup", name: name("setup", n) })).binding!,
      delete: async (n: string) => void (await ask({ operation: "delete", name: name("delete", n) })),
      call: async (n: string, request) => {
        const { tool, input, deadline } = object("call", request);
        if (typeof tool !== "string" || tool === "") throw new TypeError("ctx.environments.call(name, { tool, input }): tool must be a non-empty string");
        if (deadline !== undefined && (!Number.isInteger(deadline) || deadline < 0)) throw new TypeError("ctx.environments.call: deadline must be an absolute time in ms since the epoch (an integer), like ctx.deadline");
        const reason = notJsonReason(input);
        if (reason) throw new TypeError(`ctx.environments.call(${JSON.stringify(n)}, { tool: ${JSON.stringify(tool)} }): input is not JSON: ${reason}`);
        const r = await ask({ operation: "call", name: name("call", n), tool, input: input as never, ...(deadline !== undefined ? { deadlineAt: deadline } : {}) });
        return r.outcome!;
      },
    } satisfies EnvironmentControl);
  }

  private environment(request: EnvironmentRequest): Promise<EnvironmentAnswer> {
    const what = `ctx.environments.${request.operation}`;
    return this.guard(what, async () => {
      this.refuseIfClosed(what);
      const answer = await this.channel.request({ type: "environment_request", callId: this.callId, request });
      return answer.environment!;
    });
  }

  private async model(request: ModelRequest): Promise<ModelResult> {
    this.refuseIfClosed("model");
    const answer = await this.channel.request({ type: "model_request", callId: this.callId, request });
    return answer.result!;
  }
}

/** A frame the SDK refused to send for its size (over maxFrameBytes): the runtime never saw it. */
function tooLarge(e: unknown): boolean {
  return e instanceof SdkError && e.code === "frame_too_large";
}

/** The small outcome that ends a call whose own end was refused locally (PROTOCOL.md, "A frame the host refuses itself"). */
function refusedLocally(e: unknown): Outcome {
  return { status: "error", error: { code: "invalid_output", message: `the call's result could not be sent (frame_too_large: ${(e as Error).message})` } };
}

/** The finish frame, its optional fields set only when present (in the order the spread literal gave them). */
function finishFrame(callId: string, outcome: Outcome | undefined, opts: { content?: string } | undefined): { type: "finish"; callId: string; outcome?: Outcome; content?: string } {
  const frame: { type: "finish"; callId: string; outcome?: Outcome; content?: string } = { type: "finish", callId };
  if (outcome) frame.outcome = outcome;
  if (opts?.content !== undefined) frame.content = content(opts).content;
  return frame;
}

function content(opts: { content?: string } | undefined): { content?: string } {
  if (opts?.content === undefined) return {};
  if (typeof opts.content !== "string") throw new TypeError("content must be a string");
  return { content: opts.content };
}

