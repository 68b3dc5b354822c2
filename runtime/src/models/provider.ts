import type { ErrorCode, ModelRequest, ModelResult, ModelToolCall } from "@aexhq/brain-protocol";
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

/** What a ModelProvider is told about one call: the session, the call's index, and the signal that aborts it. */
export interface ModelCallContext {
  sessionId: string;
  /** 0-based index of this call among the session's Agentloop model calls (count of model.response records). */
  index: number;
  signal: AbortSignal;
}

/** Where a real provider is reached: the session's model name, the endpoint, the operator's key. */
export interface ProviderEndpoint {
  model: string;
  baseUrl: string;
  apiKey: string | undefined;
}

/** A model provider. Streaming is the only shape, so real providers can forward deltas later. */
export interface ModelProvider {
  readonly name: string;
  /** false: the provider never reads the request (the scripted model), so the Agentloop's conversation is not built for it. */
  readonly readsRequest?: boolean;
  stream(request: ModelRequest, ctx: ModelCallContext): AsyncIterable<ModelStreamEvent>;
}

/** A failed model call with a contract code (`script_exhausted`, `unsupported`, ...). */
export class ModelCallError extends BrainRuntimeError {
  constructor(code: ErrorCode, message: string, details?: unknown, retryable?: boolean, options?: { cause?: unknown }) {
    super(code, message, details, retryable, options);
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
