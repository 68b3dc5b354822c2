import type { ModelRequest, ModelResult, ModelToolCall } from "@aexhq/brain-protocol";
import type { ModelCallContext, ModelProvider, ModelStreamEvent, ProviderEndpoint } from "./provider.ts";
import { readSse } from "./sse.ts";
import { post, toolArguments } from "./http-failure.ts";
import { providerError } from "./provider-error.ts";

type Block = Record<string, unknown>;
interface AnthropicMessage {
  role: "user" | "assistant";
  content: Block[];
}

/** Max tokens when the request names none: the Messages API requires the field. */
export const DEFAULT_MAX_TOKENS = 4096;

/**
 * ModelRequest → Messages body. Tool results travel as `tool_result` blocks in a user message, and
 * the API wants user and assistant turns to alternate, so adjacent messages of one role are merged.
 * The API has no response-format field: a JSON request becomes an instruction in the system prompt.
 */
export function messagesBody(model: string, request: ModelRequest): Record<string, unknown> {
  const messages: AnthropicMessage[] = [];
  const push = (role: AnthropicMessage["role"], blocks: Block[]) => {
    if (blocks.length === 0) return;
    const last = messages[messages.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const m of request.messages) {
    if (m.role === "tool") push("user", [{ type: "tool_result", tool_use_id: m.toolCallId ?? "", content: m.content }]);
    else if (m.role === "assistant") {
      const blocks: Block[] = m.content === "" ? [] : [{ type: "text", text: m.content }];
      for (const c of m.toolCalls ?? []) blocks.push({ type: "tool_use", id: c.id, name: c.name, input: c.input });
      push("assistant", blocks);
    } else push("user", [{ type: "text", text: m.content }]);
  }
  let system = request.system;
  if (request.responseFormat?.type === "json") {
    const rule = request.responseFormat.schema
      ? `Answer with only a JSON value matching this JSON Schema, no other text: ${JSON.stringify(request.responseFormat.schema)}`
      : "Answer with only a JSON value, no other text.";
    system = system === undefined ? rule : `${system}\n\n${rule}`;
  }
  const body: Record<string, unknown> = { model, max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS, stream: true, messages };
  if (system !== undefined) body.system = system;
  if (request.tools?.length) body.tools = request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));
  return body;
}

const STOP: Record<string, ModelResult["stopReason"]> = { end_turn: "end", stop_sequence: "end", tool_use: "tool_calls", max_tokens: "length" };

interface StreamEvent {
  type: string;
  message?: { usage?: { input_tokens?: number; output_tokens?: number } };
  index?: number;
  content_block?: { type: string; id?: string; name?: string; text?: string };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: { input_tokens?: number | null; output_tokens?: number | null };
  error?: { type?: string; message?: string };
}

/** Anthropic Messages, streamed: text deltas as they arrive, each tool_use once its input JSON is complete. */
export class AnthropicProvider implements ModelProvider {
  readonly name = "anthropic";
  private url: string;
  constructor(private endpoint: ProviderEndpoint) {
    this.url = `${endpoint.baseUrl.replace(/\/+$/, "")}/v1/messages`;
  }

  async *stream(request: ModelRequest, ctx: ModelCallContext): AsyncIterable<ModelStreamEvent> {
    const headers: Record<string, string> = { "anthropic-version": "2023-06-01" };
    if (this.endpoint.apiKey) headers["x-api-key"] = this.endpoint.apiKey;
    const res = await post("anthropic", this.url, headers, messagesBody(this.endpoint.model, request), ctx.signal);
    let text = "";
    let stop: ModelResult["stopReason"] = "end";
    const usage = { inputTokens: 0, outputTokens: 0 };
    const toolCalls: ModelToolCall[] = [];
    const open = new Map<number, { id: string; name: string; json: string }>();
    let ended = false;
    for await (const sse of readSse(res.body!, ctx.signal)) {
      let ev: StreamEvent;
      try {
        ev = JSON.parse(sse.data) as StreamEvent;
      } catch (e) {
        throw providerError({ provider: "anthropic", reason: "bad_response" }, `anthropic sent an event that is not JSON: ${sse.data.slice(0, 200)}`, false, e);
      }
      if (ev.type === "message_start") {
        usage.inputTokens = ev.message?.usage?.input_tokens ?? 0;
        usage.outputTokens = ev.message?.usage?.output_tokens ?? 0;
      } else if (ev.type === "content_block_start" && ev.content_block?.type === "tool_use") {
        open.set(ev.index ?? 0, { id: ev.content_block.id ?? "", name: ev.content_block.name ?? "", json: "" });
      } else if (ev.type === "content_block_start" && ev.content_block?.type === "text" && ev.content_block.text) {
        // Anthropic starts text blocks empty, but compatible servers may put the first text here.
        text += ev.content_block.text;
        yield { type: "text_delta", text: ev.content_block.text };
      } else if (ev.type === "content_block_delta") {
        if (ev.delta?.type === "text_delta" && ev.delta.text) {
          text += ev.delta.text;
          yield { type: "text_delta", text: ev.delta.text };
        } else if (ev.delta?.type === "input_json_delta") {
          const c = open.get(ev.index ?? 0);
          if (c) c.json += ev.delta.partial_json ?? "";
        }
      } else if (ev.type === "content_block_stop") {
        const c = open.get(ev.index ?? 0);
        if (c) {
          open.delete(ev.index ?? 0);
          const call: ModelToolCall = { id: c.id, name: c.name, input: toolArguments("anthropic", c.name, c.json) as never };
          toolCalls.push(call);
          yield { type: "tool_call", call };
        }
      } else if (ev.type === "message_delta") {
        if (ev.delta?.stop_reason) stop = STOP[ev.delta.stop_reason] ?? "error";
        // Counts here are cumulative; newer API versions repeat input_tokens too.
        if (ev.usage?.input_tokens != null) usage.inputTokens = ev.usage.input_tokens;
        if (ev.usage?.output_tokens != null) usage.outputTokens = ev.usage.output_tokens;
      } else if (ev.type === "message_stop") {
        ended = true;
        break;
      } else if (ev.type === "error") {
        const type = ev.error?.type || undefined;
        const retryable = type === "overloaded_error" || type === "rate_limit_error" || type === "api_error";
        throw providerError(type === undefined ? { provider: "anthropic", reason: "stream_error" } : { provider: "anthropic", reason: "stream_error", type }, `anthropic: ${ev.error?.message ?? "error in stream"}`, retryable);
      }
    }
    // A connection cut mid-reply looks like this too: asking again may well work.
    if (!ended) throw providerError({ provider: "anthropic", reason: "bad_response" }, "anthropic's stream ended early (no message_stop)", true);
    yield { type: "done", result: { text, toolCalls, stopReason: stop, usage } };
  }
}
