import type { ModelConfig, ModelRequest, ModelResult, ModelToolCall } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";

/** Per-reply hints a provider may give the Agentloop beyond ModelResult (the scripted model's per-call deadlines). */
export interface ReplyHints {
  deadlineMs?: Record<string, number>;
}

/** A streamed model reply: deltas as they arrive, then exactly one `done`. */
export type ModelStreamEvent =
  | { type: "text_delta"; text: string }
  | { type: "tool_call"; call: ModelToolCall }
  | { type: "done"; result: ModelResult; hints?: ReplyHints };

export interface ModelCallContext {
  sessionId: string;
  /** 0-based index of this call among the session's Agentloop model calls (count of model.response records). */
  index: number;
  signal: AbortSignal;
}

/** A model provider. Streaming is the only shape, so real providers can forward deltas later. */
export interface ModelProvider {
  readonly name: string;
  stream(request: ModelRequest, ctx: ModelCallContext): AsyncIterable<ModelStreamEvent>;
}

/** A failed model call with a contract code (`script_exhausted`, `unsupported`, ...). */
export class ModelCallError extends BrainRuntimeError {
  constructor(code: string, message: string) {
    super(code, message);
    this.name = "ModelCallError";
  }
}

/** Drains a stream to its final result. */
export async function complete(provider: ModelProvider, request: ModelRequest, ctx: ModelCallContext): Promise<{ result: ModelResult; hints: ReplyHints }> {
  for await (const ev of provider.stream(request, ctx)) {
    if (ev.type === "done") return { result: ev.result, hints: ev.hints ?? {} };
  }
  throw new ModelCallError("internal", `provider ${provider.name} ended without a result`);
}

/** Refuses real providers until they are implemented (never a fake answer). */
export function unsupportedProvider(config: ModelConfig): BrainRuntimeError | undefined {
  if (config.provider === "scripted") return undefined;
  return new BrainRuntimeError("unsupported", `model provider ${config.provider} is not implemented yet; use {provider: "scripted"}`);
}
