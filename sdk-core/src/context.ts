import type { ModelRequest, ModelResult } from "@aexhq/brain-protocol";
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

export interface EnvironmentControl {
  list(): Promise<unknown>;
  get(name: string): Promise<unknown>;
  create(spec: unknown): Promise<unknown>;
  update(name: string, spec: unknown): Promise<unknown>;
  setup(name: string): Promise<unknown>;
  delete(name: string): Promise<unknown>;
  call(name: string, request: unknown): Promise<unknown>;
}
