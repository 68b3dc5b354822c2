import type { ModelRequest, ModelResult, ModelToolCall } from "@aexhq/brain-protocol";
import type { ModelCallError } from "./provider.ts";
import type { ModelCallContext, ModelProvider, ModelStreamEvent, ProviderEndpoint } from "./provider.ts";
import { readSse } from "./sse.ts";
import { post, toolArguments } from "./http-failure.ts";
import { providerError } from "./provider-error.ts";

type ChatMessage = Record<string, unknown>;

/** ModelRequest → Chat Completions body (streamed, with usage in the last chunk). */
export function chatBody(model: string, request: ModelRequest): Record<string, unknown> {
  const messages: ChatMessage[] = [];
  if (request.system !== undefined) messages.push({ role: "system", content: request.system });
  for (const m of request.messages) {
    if (m.role === "tool") messages.push({ role: "tool", tool_call_id: m.toolCallId ?? "", content: m.content });
    else if (m.role === "assistant" && m.toolCalls?.length) {
      messages.push({
        role: "assistant",
        content: m.content === "" ? null : m.content,
        tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.input) } })),
      });
    } else messages.push({ role: m.role, content: m.content });
  }
  const body: Record<string, unknown> = { model, stream: true, stream_options: { include_usage: true }, messages };
  if (request.tools?.length) body.tools = request.tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.inputSchema } }));
  if (request.responseFormat?.type === "json") {
    body.response_format = request.responseFormat.schema
      ? { type: "json_schema", json_schema: { name: "response", schema: request.responseFormat.schema, strict: false } }
      : { type: "json_object" };
  }
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens;
  return body;
}

const STOP: Record<string, ModelResult["stopReason"]> = { stop: "end", tool_calls: "tool_calls", function_call: "tool_calls", length: "length" };

interface ChatChunk {
  choices?: Array<{ delta?: { content?: string | null; tool_calls?: Array<{ index: number; id?: string; function?: { name?: string; arguments?: string } }> }; finish_reason?: string | null }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  error?: { message?: string; type?: string; code?: string | null };
}

/** Error types OpenAI-compatible servers use for load, worth retrying (a server error, a rate limit, an overload). */
const RETRYABLE_STREAM_ERRORS = new Set(["server_error", "rate_limit_exceeded", "rate_limit_error", "overloaded_error", "api_error"]);

/** An error object inside the stream (after a 200): the provider failed mid-reply. */
function streamError(error: NonNullable<ChatChunk["error"]>): ModelCallError {
  const type = error.code || error.type || undefined;
  const retryable = RETRYABLE_STREAM_ERRORS.has(error.type ?? "") || RETRYABLE_STREAM_ERRORS.has(error.code ?? "");
  return providerError(type === undefined ? { provider: "openai", reason: "stream_error" } : { provider: "openai", reason: "stream_error", type }, `openai: ${error.message ?? "error in stream"}`, retryable);
}

/** OpenAI Chat Completions (and compatible servers), streamed: text deltas as they arrive, tool calls once their arguments are complete. */
export class OpenAIProvider implements ModelProvider {
  readonly name = "openai";
  private url: string;
  constructor(private endpoint: ProviderEndpoint) {
    this.url = `${endpoint.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  }

  async *stream(request: ModelRequest, ctx: ModelCallContext): AsyncIterable<ModelStreamEvent> {
    const headers: Record<string, string> = this.endpoint.apiKey ? { authorization: `Bearer ${this.endpoint.apiKey}` } : {};
    const res = await post("openai", this.url, headers, chatBody(this.endpoint.model, request), ctx.signal);
    let text = "";
    let stop: ModelResult["stopReason"] | undefined;
    const usage = { inputTokens: 0, outputTokens: 0 };
    const calls: Array<{ id: string; name: string; args: string }> = [];
    let ended = false;
    for await (const ev of readSse(res.body!, ctx.signal)) {
      if (ev.data === "[DONE]") {
        ended = true;
        break;
      }
      let chunk: ChatChunk;
      try {
        chunk = JSON.parse(ev.data) as ChatChunk;
      } catch (e) {
        throw providerError({ provider: "openai", reason: "bad_response" }, `openai sent a stream chunk that is not JSON: ${ev.data.slice(0, 200)}`, false, e);
      }
      if (chunk.error) throw streamError(chunk.error);
      if (chunk.usage) {
        usage.inputTokens = chunk.usage.prompt_tokens ?? 0;
        usage.outputTokens = chunk.usage.completion_tokens ?? 0;
      }
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const delta = choice.delta;
      if (delta?.content) {
        text += delta.content;
        yield { type: "text_delta", text: delta.content };
      }
      for (const part of delta?.tool_calls ?? []) {
        const c = (calls[part.index] ??= { id: "", name: "", args: "" });
        if (part.id) c.id = part.id;
        if (part.function?.name) c.name += part.function.name;
        if (part.function?.arguments) c.args += part.function.arguments;
      }
      if (choice.finish_reason) stop = STOP[choice.finish_reason] ?? "error";
    }
    // A connection cut mid-reply looks like this too: asking again may well work.
    if (!ended) throw providerError({ provider: "openai", reason: "bad_response" }, "openai's stream ended early (no [DONE])", true);
    const toolCalls: ModelToolCall[] = calls.filter((c) => c !== undefined).map((c) => ({ id: c.id, name: c.name, input: toolArguments("openai", c.name, c.args) as never }));
    for (const call of toolCalls) yield { type: "tool_call", call };
    yield { type: "done", result: { text, toolCalls, stopReason: stop ?? (toolCalls.length > 0 ? "tool_calls" : "end"), usage } };
  }
}
