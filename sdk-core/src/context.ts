import type { EnvironmentBinding, EnvironmentSpec, EnvironmentUpdate, ModelRequest, ModelResult, Outcome } from "@aexhq/brain-protocol";
import type { ToolOutput } from "./outcome.ts";

/**
 * The second argument of `run`. `Output` is what the tool's output schema accepts (`z.input` of
 * `output`; `unknown` without one): `emitResult` and `finish` take it or an explicit Outcome envelope.
 */
export interface ToolContext<Options = Record<string, unknown>, Output = unknown> {
  /** The factory options, parsed once and frozen. */
  readonly options: Options;
  /** The owning session. */
  readonly sessionId: string;
  /** The journal sequence of this call's tool.call_started record. */
  readonly sequence: number;
  /** The caller-owned absolute deadline (ms since the epoch), or undefined for unlimited execution. */
  readonly deadline: number | undefined;
  /** Aborted on deadline, cancellation or connection loss (best effort). */
  readonly signal: AbortSignal;
  /** Appends a durable extension event; resolves with its committed journal sequence. */
  emit(kind: string, data: unknown): Promise<number>;
  /** Appends a validated result, optionally with model-facing text; resolves with its sequence. */
  emitResult(value: ToolOutput<Output>, opts?: { content?: string }): Promise<number>;
  /** Optionally appends a result, then commits completion. */
  finish(value?: ToolOutput<Output>, opts?: { content?: string }): Promise<void>;
  /** Calls the session's model with explicit messages. */
  model(request: ModelRequest): Promise<ModelResult>;
  /** Environment control, limited to what the placement authorizes. */
  readonly environments: EnvironmentControl;
}

/**
 * Environment control (`ctx.environments`): the session's Brain-side Environment bindings, within
 * the authority the tool's placement grants (`hostEnv({ environments })`; none by default). Every
 * operation is journaled before its effect; a refusal rejects with a ProtocolError whose `code` is
 * `forbidden` and whose `details.missing` names the grant that was missing.
 */
export interface EnvironmentControl {
  /** Every Brain-side binding of the session (needs `environments.list`). */
  list(): Promise<EnvironmentBinding[]>;
  /** One binding (needs `environments.list`); `not_found` when the session has none of that name. */
  get(name: string): Promise<EnvironmentBinding>;
  /** A new binding in this session, with grants within `environments.create` and the server's allow-list. */
  create(spec: EnvironmentSpec): Promise<EnvironmentBinding>;
  /** A binding created at run time gets these grants and tools from now on (absent = none). */
  update(name: string, spec: EnvironmentUpdate): Promise<EnvironmentBinding>;
  /** Prepares the binding (component and descriptor bindings are always ready: journaled, answered as they are). */
  setup(name: string): Promise<EnvironmentBinding>;
  /** Removes a binding created at run time. */
  delete(name: string): Promise<void>;
  /**
   * Calls `tool` placed in binding `name`: a nested tool call, journaled with `origin` = this call,
   * charged to this call's activation, ending no later than this call's deadline (or `deadline`,
   * absolute ms since the epoch, if earlier). Resolves with its Outcome, whatever its status.
   */
  call(name: string, request: { tool: string; input: unknown; deadline?: number }): Promise<Outcome>;
}
