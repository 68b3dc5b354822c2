import type { ModelRequest, ModelResult } from "@aexhq/brain-protocol";
import type { EnvironmentControl } from "../context.ts";

/** The ctx calls, already guarded by their invocation (host/invocation.ts). */
export interface ContextCalls {
  emit(kind: string, data: unknown): Promise<number>;
  emitResult(value: unknown, opts?: { content?: string }): Promise<number>;
  finish(value?: unknown, opts?: { content?: string }): Promise<void>;
  model(request: ModelRequest): Promise<ModelResult>;
}

/**
 * The `ctx` a tool's `run` gets: own, enumerable, frozen properties in a fixed order (options,
 * sessionId, sequence, deadline, signal, emit, emitResult, finish, model, environments), so a tool
 * may destructure it (`{ emit, finish }`) or spread it. `signal` and `environments` are getters,
 * made when a tool first reads them (most never do).
 *
 * A class, not an object literal: a literal with getters is built through the slow path on every
 * evaluation (a fresh pair of accessor functions each time, so no shared shape), which cost 4–5 µs
 * a call, as much as the rest of the SDK's work on it. Here the accessors are shared by every ctx
 * and reach their call through private fields.
 */
export class CallContext {
  readonly #signal: () => AbortSignal;
  readonly #environments: () => EnvironmentControl;

  static readonly #signalProperty: PropertyDescriptor = {
    get(this: CallContext) {
      return this.#signal();
    },
    enumerable: true,
    configurable: true,
  };

  static readonly #environmentsProperty: PropertyDescriptor = {
    get(this: CallContext) {
      return this.#environments();
    },
    enumerable: true,
    configurable: true,
  };

  constructor(
    options: Readonly<Record<string, unknown>>,
    sessionId: string,
    sequence: number,
    deadline: number | undefined,
    signal: () => AbortSignal,
    calls: ContextCalls,
    environments: () => EnvironmentControl,
  ) {
    this.#signal = signal;
    this.#environments = environments;
    const self = this as unknown as Record<string, unknown>;
    self.options = options;
    self.sessionId = sessionId;
    self.sequence = sequence;
    self.deadline = deadline;
    Object.defineProperty(this, "signal", CallContext.#signalProperty);
    self.emit = calls.emit;
    self.emitResult = calls.emitResult;
    self.finish = calls.finish;
    self.model = calls.model;
    Object.defineProperty(this, "environments", CallContext.#environmentsProperty);
    Object.freeze(this);
  }
}
