// The real providers against local HTTP servers that speak their wire formats, with real
// streaming: chunks split mid-line and mid-character, and held back until the client has seen
// the first delta.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ModelRequest } from "@aexhq/brain-protocol";
import { OpenAIProvider } from "../src/models/openai.ts";
import { AnthropicProvider } from "../src/models/anthropic.ts";
import type { ModelProvider, ModelStreamEvent } from "../src/models/provider.ts";
import { complete } from "../src/models/provider.ts";

interface Seen {
  path: string;
  headers: IncomingMessage["headers"];
  body: any;
}

/** A one-route server: `answer` writes the response; every request is recorded. */
async function server(answer: (res: ServerResponse, req: IncomingMessage) => unknown) {
  const seen: Seen[] = [];
  const s = createServer(async (req, res) => {
    let body = "";
    for await (const c of req) body += c;
    seen.push({ path: req.url ?? "", headers: req.headers, body: body ? JSON.parse(body) : undefined });
    await answer(res, req);
  });
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  const base = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  return { base, seen, close: () => new Promise<void>((r) => (s.closeAllConnections(), s.close(() => r()))) };
}

const sse = (res: ServerResponse) => res.writeHead(200, { "content-type": "text/event-stream" });
const tick = () => new Promise((r) => setTimeout(r, 5));
const ctx = (signal = new AbortController().signal) => ({ sessionId: "ses_test", index: 0, signal });

async function collect(p: ModelProvider, request: ModelRequest, signal?: AbortSignal): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = [];
  for await (const ev of p.stream(request, ctx(signal))) out.push(ev);
  return out;
}

const request: ModelRequest = {
  system: "Be brief.",
  messages: [
    { role: "user", content: "Find 42." },
    { role: "assistant", content: "", toolCalls: [{ id: "call_1", name: "lookup", input: { id: "42" } }, { id: "call_2", name: "lookup", input: { id: "43" } }] },
    { role: "tool", toolCallId: "call_1", content: "Ada" },
    { role: "tool", toolCallId: "call_2", content: "Grace" },
  ],
  tools: [{ name: "lookup", description: "Look up one record.", inputSchema: { type: "object", properties: { id: { type: "string" } } } }],
  maxTokens: 50,
};

test("openai: the request maps system, tool calls, tool results, tools, max tokens and the key", async () => {
  const api = await server((res) => (sse(res), res.end('data: {"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')));
  try {
    await collect(new OpenAIProvider({ model: "gpt-x", baseUrl: `${api.base}/v1/`, apiKey: "sk-1" }), { ...request, responseFormat: { type: "json", schema: { type: "object" } } });
    const [r] = api.seen;
    assert.is(r!.path, "/v1/chat/completions");
    assert.is(r!.headers.authorization, "Bearer sk-1");
    assert.equal(r!.body, {
      model: "gpt-x",
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Find 42." },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: '{"id":"42"}' } }, { id: "call_2", type: "function", function: { name: "lookup", arguments: '{"id":"43"}' } }] },
        { role: "tool", tool_call_id: "call_1", content: "Ada" },
        { role: "tool", tool_call_id: "call_2", content: "Grace" },
      ],
      tools: [{ type: "function", function: { name: "lookup", description: "Look up one record.", parameters: { type: "object", properties: { id: { type: "string" } } } } }],
      response_format: { type: "json_schema", json_schema: { name: "response", schema: { type: "object" }, strict: false } },
      max_tokens: 50,
    });
  } finally {
    await api.close();
  }
});

test("openai: text streams as deltas before the response ends; split chunks, tool calls, stop reason and usage are assembled", async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const api = await server(async (res) => {
    sse(res);
    res.write('data: {"choices":[{"delta":{"role":"assistant","content":"Hel"}}]}\n\n');
    await held; // the rest comes only after the client has seen the first delta
    const rest =
      'data: {"choices":[{"delta":{"content":"lo ünï"}}]}\r\n\r\n' +
      'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"look","arguments":"{\\"id\\""}}]}}]}\n\n' +
      'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"up","arguments":":\\"7\\"}"}}]}}]}\n\n' +
      'data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}\n\n' +
      ': a comment\n\ndata: {"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":4}}\n\ndata: [DONE]\n\n';
    const bytes = Buffer.from(rest);
    for (let i = 0; i < bytes.length; i += 7) (res.write(bytes.subarray(i, i + 7)), await tick());
    res.end();
  });
  try {
    const events: ModelStreamEvent[] = [];
    for await (const ev of new OpenAIProvider({ model: "m", baseUrl: api.base, apiKey: undefined }).stream({ messages: [{ role: "user", content: "hi" }] }, ctx())) {
      events.push(ev);
      if (events.length === 1) release();
    }
    assert.equal(events[0], { type: "text_delta", text: "Hel" });
    assert.is(api.seen[0]!.headers.authorization, undefined, "no key, no header");
    const done = events.at(-1) as Extract<ModelStreamEvent, { type: "done" }>;
    assert.equal(done.result, { text: "Hello ünï", toolCalls: [{ id: "c1", name: "lookup", input: { id: "7" } }], stopReason: "tool_calls", usage: { inputTokens: 11, outputTokens: 4 } });
    assert.equal(events.filter((e) => e.type === "tool_call").length, 1);
  } finally {
    await api.close();
  }
});

test("each HTTP error status becomes its contract code, with the provider's message and retryable", async () => {
  const cases: Array<[number, string, boolean]> = [[400, "invalid_request", false], [401, "unauthorized", false], [403, "forbidden", false], [404, "not_found", false], [429, "internal", true], [500, "internal", true], [503, "internal", true]];
  let status = 400;
  const api = await server((res) => (res.writeHead(status, { "content-type": "application/json" }), res.end(JSON.stringify({ error: { message: `nope ${status}` } }))));
  try {
    for (const [s, code, retryable] of cases) {
      status = s;
      for (const p of [new OpenAIProvider({ model: "m", baseUrl: api.base, apiKey: "k" }), new AnthropicProvider({ model: "m", baseUrl: api.base, apiKey: "k" })]) {
        const e = await complete(p, { messages: [{ role: "user", content: "x" }] }, ctx()).then(() => undefined, (e) => e);
        assert.is(e?.code, code, `${p.name} ${s}`);
        assert.is(e.retryable, retryable, `${p.name} ${s} retryable`);
        assert.match(e.message, `HTTP ${s}: nope ${s}`);
      }
    }
  } finally {
    await api.close();
  }
});

test("an unreachable endpoint is internal and retryable; a stream that ends early is internal", async () => {
  const api = await server((res) => (sse(res), res.end('data: {"choices":[{"delta":{"content":"par"}}]}\n\n')));
  const closed = await server(() => {});
  const deadBase = closed.base;
  await closed.close();
  try {
    const early = await complete(new OpenAIProvider({ model: "m", baseUrl: api.base, apiKey: "k" }), { messages: [{ role: "user", content: "x" }] }, ctx()).then(() => undefined, (e) => e);
    assert.is(early?.code, "internal");
    assert.match(early.message, "ended early");
    const unreachable = await complete(new AnthropicProvider({ model: "m", baseUrl: deadBase, apiKey: "k" }), { messages: [{ role: "user", content: "x" }] }, ctx()).then(() => undefined, (e) => e);
    assert.is(unreachable?.code, "internal");
    assert.is(unreachable.retryable, true);
  } finally {
    await api.close();
  }
});

test("malformed tool arguments from the model are invalid_output", async () => {
  const api = await server((res) => (sse(res), res.end('data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"t","arguments":"{oops"}}]},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n')));
  try {
    const e = await complete(new OpenAIProvider({ model: "m", baseUrl: api.base, apiKey: "k" }), { messages: [{ role: "user", content: "x" }] }, ctx()).then(() => undefined, (e) => e);
    assert.is(e?.code, "invalid_output");
    assert.match(e.message, "tool t");
  } finally {
    await api.close();
  }
});

test("aborting the signal mid-stream stops the iteration and closes the HTTP request", async () => {
  let closedByClient!: () => void;
  const serverSawClose = new Promise<void>((r) => (closedByClient = r));
  const api = await server((res) => {
    sse(res);
    res.write('data: {"choices":[{"delta":{"content":"first"}}]}\n\n');
    res.on("close", () => closedByClient());
  });
  try {
    const abort = new AbortController();
    const seen: string[] = [];
    const err = await (async () => {
      for await (const ev of new OpenAIProvider({ model: "m", baseUrl: api.base, apiKey: "k" }).stream({ messages: [{ role: "user", content: "x" }] }, ctx(abort.signal))) {
        if (ev.type === "text_delta") (seen.push(ev.text), abort.abort());
      }
    })().then(() => undefined, (e) => e);
    assert.equal(seen, ["first"]);
    assert.is(err?.name, "AbortError");
    await Promise.race([serverSawClose, new Promise((_, j) => setTimeout(() => j(new Error("the server never saw the request closed")), 2000))]);
  } finally {
    await api.close();
  }
});

test("anthropic: the request merges tool results into one user turn, sets version, key, max_tokens and a JSON instruction", async () => {
  const api = await server((res) => (sse(res), res.end('event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":1,"output_tokens":0}}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n')));
  try {
    await collect(new AnthropicProvider({ model: "claude-x", baseUrl: api.base, apiKey: "ak" }), { ...request, maxTokens: undefined, responseFormat: { type: "json" } } as ModelRequest);
    const [r] = api.seen;
    assert.is(r!.path, "/v1/messages");
    assert.is(r!.headers["x-api-key"], "ak");
    assert.is(r!.headers["anthropic-version"], "2023-06-01");
    assert.equal(r!.body, {
      model: "claude-x",
      max_tokens: 4096,
      stream: true,
      system: "Be brief.\n\nAnswer with only a JSON value, no other text.",
      messages: [
        { role: "user", content: [{ type: "text", text: "Find 42." }] },
        { role: "assistant", content: [{ type: "tool_use", id: "call_1", name: "lookup", input: { id: "42" } }, { type: "tool_use", id: "call_2", name: "lookup", input: { id: "43" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "Ada" }, { type: "tool_result", tool_use_id: "call_2", content: "Grace" }] },
      ],
      tools: [{ name: "lookup", description: "Look up one record.", input_schema: { type: "object", properties: { id: { type: "string" } } } }],
    });
  } finally {
    await api.close();
  }
});

test("anthropic: text deltas stream, tool_use input JSON is assembled, stop reason and usage map", async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const api = await server(async (res) => {
    sse(res);
    res.write(ev("message_start", { message: { usage: { input_tokens: 20, output_tokens: 1 } } }) + ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }) + ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Let me " } }));
    await held;
    const rest =
      ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "look." } }) +
      ev("content_block_stop", { index: 0 }) +
      ev("content_block_start", { index: 1, content_block: { type: "tool_use", id: "tu_1", name: "lookup", input: {} } }) +
      ev("content_block_delta", { index: 1, delta: { type: "input_json_delta", partial_json: '{"id": ' } }) +
      ev("content_block_delta", { index: 1, delta: { type: "input_json_delta", partial_json: '"42"}' } }) +
      ev("content_block_stop", { index: 1 }) +
      ev("message_delta", { delta: { stop_reason: "tool_use" }, usage: { output_tokens: 9 } }) +
      ev("message_stop", {});
    const bytes = Buffer.from(rest);
    for (let i = 0; i < bytes.length; i += 11) (res.write(bytes.subarray(i, i + 11)), await tick());
    res.end();
  });
  try {
    const events: ModelStreamEvent[] = [];
    for await (const e of new AnthropicProvider({ model: "m", baseUrl: api.base, apiKey: "k" }).stream({ messages: [{ role: "user", content: "hi" }] }, ctx())) {
      events.push(e);
      if (events.length === 1) release();
    }
    assert.equal(events[0], { type: "text_delta", text: "Let me " });
    const done = events.at(-1) as Extract<ModelStreamEvent, { type: "done" }>;
    assert.equal(done.result, { text: "Let me look.", toolCalls: [{ id: "tu_1", name: "lookup", input: { id: "42" } }], stopReason: "tool_calls", usage: { inputTokens: 20, outputTokens: 9 } });
  } finally {
    await api.close();
  }
});

test("anthropic: an error event in the stream becomes a ModelCallError (overloaded is retryable)", async () => {
  const api = await server((res) => (sse(res), res.end('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n')));
  try {
    const e = await complete(new AnthropicProvider({ model: "m", baseUrl: api.base, apiKey: "k" }), { messages: [{ role: "user", content: "x" }] }, ctx()).then(() => undefined, (e) => e);
    assert.is(e?.code, "internal");
    assert.is(e.retryable, true);
    assert.match(e.message, "Overloaded");
  } finally {
    await api.close();
  }
});

test.run();
