// The OpenAI provider against a real local HTTP server speaking Chat Completions streaming: SSE
// written in small pieces with delays, split mid-line, mid-JSON and mid-UTF-8 character, and held
// back until the client proves it has already seen the first delta.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { ModelRequest, ModelResult } from "@aexhq/brain-protocol";
import { OpenAIProvider } from "../src/models/openai.ts";
import { ModelCallError } from "../src/models/provider.ts";
import type { ModelStreamEvent } from "../src/models/provider.ts";
import { providerServer, deferred, within, sse, trickle } from "./helpers/provider-server.ts";

const chatServer = (answer: Parameters<typeof providerServer>[0]) => providerServer(answer, "/v1");
const chunk = (o: object) => `data: ${JSON.stringify(o)}\n\n`;
const delta = (d: object, finish: string | null = null) => chunk({ id: "chatcmpl-1", object: "chat.completion.chunk", choices: [{ index: 0, delta: d, finish_reason: finish }] });
const usageChunk = (prompt: number, completion: number) => chunk({ choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } });
const DONE = "data: [DONE]\n\n";

const provider = (base: string) => new OpenAIProvider({ model: "gpt-test", baseUrl: base, apiKey: "sk-test" });
const keyless = (base: string) => new OpenAIProvider({ model: "gpt-test", baseUrl: base, apiKey: undefined });
const ctx = (signal = new AbortController().signal) => ({ sessionId: "ses_test", index: 0, signal });
const hi: ModelRequest = { messages: [{ role: "user", content: "hi" }] };

async function collect(p: OpenAIProvider, request: ModelRequest = hi, signal?: AbortSignal): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = [];
  for await (const ev of p.stream(request, ctx(signal))) out.push(ev);
  return out;
}

const resultOf = (events: ModelStreamEvent[]): ModelResult => {
  const last = events.at(-1);
  assert.is(last?.type, "done", "the stream ends with done");
  return (last as Extract<ModelStreamEvent, { type: "done" }>).result;
};

const failureOf = (p: Promise<unknown>): Promise<any> => p.then(() => assert.unreachable("expected a failure"), (e) => e);

test("the request body maps system, assistant tool calls, tool results, tool specs, a JSON schema and max tokens; the key is a bearer header", async () => {
  const api = await chatServer((res) => (sse(res), res.end(delta({ content: "ok" }, "stop") + DONE)));
  try {
    const request: ModelRequest = {
      system: "Be brief.",
      messages: [
        { role: "user", content: "Find 42." },
        { role: "assistant", content: "", toolCalls: [{ id: "call_1", name: "lookup", input: { id: "42" } }, { id: "call_2", name: "lookup", input: { id: "43" } }] },
        { role: "tool", toolCallId: "call_1", content: "Ada" },
        { role: "tool", toolCallId: "call_2", content: "Grace" },
        { role: "assistant", content: "Checking one more.", toolCalls: [{ id: "call_3", name: "lookup", input: ["x", 1] }] },
        { role: "tool", toolCallId: "call_3", content: "none" },
        { role: "assistant", content: "Found Ada and Grace." },
        { role: "user", content: "Thanks, as JSON please." },
      ],
      tools: [{ name: "lookup", description: "Look up one record.", inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } }],
      responseFormat: { type: "json", schema: { type: "object", properties: { names: { type: "array" } } } },
      maxTokens: 50,
    };
    await collect(new OpenAIProvider({ model: "gpt-x", baseUrl: `${api.base}/`, apiKey: "sk-1" }), request);
    const [r] = api.received;
    assert.is(r!.method, "POST");
    assert.is(r!.path, "/v1/chat/completions", "a trailing slash on baseUrl is stripped");
    assert.is(r!.headers.authorization, "Bearer sk-1");
    assert.is(r!.headers["content-type"], "application/json");
    assert.equal(r!.body, {
      model: "gpt-x",
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Find 42." },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "lookup", arguments: '{"id":"42"}' } },
            { id: "call_2", type: "function", function: { name: "lookup", arguments: '{"id":"43"}' } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "Ada" },
        { role: "tool", tool_call_id: "call_2", content: "Grace" },
        { role: "assistant", content: "Checking one more.", tool_calls: [{ id: "call_3", type: "function", function: { name: "lookup", arguments: '["x",1]' } }] },
        { role: "tool", tool_call_id: "call_3", content: "none" },
        { role: "assistant", content: "Found Ada and Grace." },
        { role: "user", content: "Thanks, as JSON please." },
      ],
      tools: [{ type: "function", function: { name: "lookup", description: "Look up one record.", parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } } }],
      response_format: { type: "json_schema", json_schema: { name: "response", schema: { type: "object", properties: { names: { type: "array" } } }, strict: false } },
      max_tokens: 50,
    });
  } finally {
    await api.close();
  }
});

test("a JSON format without a schema asks for json_object; a bare request sends no system, tools, format or max_tokens; no key sends no authorization", async () => {
  const api = await chatServer((res) => (sse(res), res.end(delta({ content: "{}" }, "stop") + DONE)));
  try {
    await collect(keyless(api.base), { messages: [{ role: "user", content: "json" }], responseFormat: { type: "json" } });
    await collect(keyless(api.base), { messages: [{ role: "user", content: "plain" }], responseFormat: { type: "text" }, tools: [] });
    const [json, plain] = api.received;
    assert.is(json!.headers.authorization, undefined);
    assert.equal(json!.body, { model: "gpt-test", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "json" }], response_format: { type: "json_object" } });
    assert.equal(plain!.body, { model: "gpt-test", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "plain" }] });
  } finally {
    await api.close();
  }
});

test("text deltas arrive while the server still holds the response open; split bytes, CRLF, comments and multi-line data decode", async () => {
  const release = deferred();
  let serverDone = false;
  const api = await chatServer(async (res) => {
    sse(res);
    res.write(": keep-alive comment\n\n" + delta({ role: "assistant", content: "Hel" }));
    await release.promise; // nothing more until the client has yielded the first delta
    await trickle(
      res,
      delta({ content: "lo, ünïcödé 😀 " }).replace(/\n/g, "\r\n") +
        // one event whose JSON spans two data lines (joined by "\n", which JSON ignores)
        'data: {"choices":[{"index":0,"delta":\ndata: {"content":"wörld"},"finish_reason":null}]}\n\n' +
        delta({}, "stop") +
        usageChunk(12, 5) +
        DONE,
      3,
    );
    serverDone = true;
    res.end();
  });
  try {
    const events: ModelStreamEvent[] = [];
    let doneAtFirstDelta: boolean | undefined;
    await within(
      (async () => {
        for await (const ev of provider(api.base).stream(hi, ctx())) {
          events.push(ev);
          if (events.length === 1) {
            doneAtFirstDelta = serverDone;
            release.resolve();
          }
        }
      })(),
      10_000,
      "the first delta never arrived while the server held the response",
    );
    assert.equal(events[0], { type: "text_delta", text: "Hel" });
    assert.is(doneAtFirstDelta, false, "the first delta came before the server finished");
    const texts = events.flatMap((e) => (e.type === "text_delta" ? [e.text] : []));
    assert.equal(texts, ["Hel", "lo, ünïcödé 😀 ", "wörld"]);
    assert.equal(resultOf(events), { text: "Hello, ünïcödé 😀 wörld", toolCalls: [], stopReason: "end", usage: { inputTokens: 12, outputTokens: 5 } });
  } finally {
    release.resolve();
    await api.close();
  }
});

test("tool call fragments are assembled by index (interleaved, split arguments, empty arguments as {}) and yielded after the stream", async () => {
  const api = await chatServer(async (res) => {
    sse(res);
    await trickle(
      res,
      delta({ role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "lookup", arguments: "" } }] }) +
        delta({ tool_calls: [{ index: 0, function: { arguments: '{"id": "4' } }] }) +
        delta({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "now", arguments: "" } }] }) +
        delta({ tool_calls: [{ index: 0, function: { arguments: '2", "tags": ["ä", 1]}' } }] }) +
        delta({ tool_calls: [{ index: 2, id: "call_c", type: "function", function: { name: "search", arguments: '{"q":' } }] }) +
        delta({ tool_calls: [{ index: 2, function: { arguments: '"x"}' } }] }) +
        delta({}, "tool_calls") +
        usageChunk(30, 17) +
        DONE,
      4,
    );
    res.end();
  });
  try {
    const events = await collect(provider(api.base));
    const calls = [
      { id: "call_a", name: "lookup", input: { id: "42", tags: ["ä", 1] } },
      { id: "call_b", name: "now", input: {} },
      { id: "call_c", name: "search", input: { q: "x" } },
    ];
    assert.equal(
      events.filter((e) => e.type === "tool_call"),
      calls.map((call) => ({ type: "tool_call", call })),
    );
    assert.equal(resultOf(events), { text: "", toolCalls: calls, stopReason: "tool_calls", usage: { inputTokens: 30, outputTokens: 17 } });
  } finally {
    await api.close();
  }
});

test("finish reasons map to stop reasons, and usage is zero when the server never sends it", async () => {
  const cases: Array<[string, ModelResult["stopReason"]]> = [["stop", "end"], ["length", "length"], ["tool_calls", "tool_calls"], ["content_filter", "error"], ["something_new", "error"]];
  let finish = "stop";
  const api = await chatServer((res) => (sse(res), res.end(delta({ content: "x" }) + delta({}, finish) + DONE)));
  try {
    for (const [reason, stopReason] of cases) {
      finish = reason;
      const result = resultOf(await collect(provider(api.base)));
      assert.is(result.stopReason, stopReason, reason);
      assert.equal(result.usage, { inputTokens: 0, outputTokens: 0 });
    }
  } finally {
    await api.close();
  }
});

test("each HTTP error status is provider_error with its reason, retryable, the status and OpenAI's error code in details, and OpenAI's message", async () => {
  const cases: Array<[number, string, boolean]> = [
    [400, "rejected", false],
    [401, "unauthorized", false],
    [403, "unauthorized", false],
    [404, "rejected", false],
    [429, "rate_limited", true],
    [500, "unavailable", true],
    [502, "unavailable", true],
    [503, "unavailable", true],
  ];
  let status = 400;
  const api = await chatServer((res) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: `Problem number ${status}.`, type: "invalid_request_error", param: null, code: status === 401 ? "invalid_api_key" : null } }));
  });
  try {
    for (const [s, reason, retryable] of cases) {
      status = s;
      const e = await failureOf(collect(provider(api.base)));
      assert.instance(e, ModelCallError, `${s}`);
      assert.is(e.code, "provider_error", `${s} code`);
      assert.is(e.retryable, retryable, `${s} retryable`);
      // OpenAI's precise `code` wins over its class `type` when it sends one.
      assert.equal(e.details, { provider: "openai", reason, status: s, type: s === 401 ? "invalid_api_key" : "invalid_request_error" }, `${s} details`);
      assert.is(e.message, `openai answered HTTP ${s}: Problem number ${s}.`);
    }
  } finally {
    await api.close();
  }
});

test("a non-JSON error body is surfaced as its first 200 characters", async () => {
  const page = `<html><body>${"Bad gateway! ".repeat(40)}</body></html>`;
  const api = await chatServer((res) => (res.writeHead(502, { "content-type": "text/html" }), res.end(page)));
  try {
    const e = await failureOf(collect(provider(api.base)));
    assert.is(e.code, "provider_error");
    assert.equal(e.details, { provider: "openai", reason: "unavailable", status: 502 });
    assert.is(e.message, `openai answered HTTP 502: ${page.slice(0, 200)}`);
  } finally {
    await api.close();
  }
});

test("a stream chunk that is not JSON, and an error object inside the stream, are provider_error (the latter with OpenAI's type and its retryability)", async () => {
  let body = "";
  const api = await chatServer((res) => (sse(res), res.end(body)));
  try {
    body = delta({ content: "a" }) + "data: <html>oops</html>\n\n";
    let e = await failureOf(collect(provider(api.base)));
    assert.is(e.code, "provider_error");
    assert.equal(e.details, { provider: "openai", reason: "bad_response" });
    assert.is(e.retryable, false);
    assert.match(e.message, "not JSON: <html>oops</html>");
    body = chunk({ error: { message: "The server had an error.", type: "server_error", code: null } });
    e = await failureOf(collect(provider(api.base)));
    assert.equal([e.code, e.details, e.retryable, e.message], ["provider_error", { provider: "openai", reason: "stream_error", type: "server_error" }, true, "openai: The server had an error."]);
    body = chunk({ error: { message: "Bad input." } });
    e = await failureOf(collect(provider(api.base)));
    assert.equal([e.code, e.details, e.retryable], ["provider_error", { provider: "openai", reason: "stream_error" }, false]);
  } finally {
    await api.close();
  }
});

test("malformed tool call arguments are invalid_output naming the tool", async () => {
  const api = await chatServer((res) => {
    sse(res);
    res.end(delta({ tool_calls: [{ index: 0, id: "c1", type: "function", function: { name: "lookup", arguments: '{"id": 4' } }] }) + delta({}, "tool_calls") + DONE);
  });
  try {
    const e = await failureOf(collect(provider(api.base)));
    assert.instance(e, ModelCallError);
    assert.is(e.code, "invalid_output");
    assert.match(e.message, "lookup");
  } finally {
    await api.close();
  }
});

test("a stream that ends without [DONE] fails provider_error 'stream ended early' (retryable) after the deltas it did send", async () => {
  const api = await chatServer((res) => (sse(res), res.end(delta({ content: "partial" }) + delta({}, "stop"))));
  try {
    const seen: ModelStreamEvent[] = [];
    const e = await failureOf(
      (async () => {
        for await (const ev of provider(api.base).stream(hi, ctx())) seen.push(ev);
      })(),
    );
    assert.equal(seen, [{ type: "text_delta", text: "partial" }]);
    assert.instance(e, ModelCallError);
    assert.is(e.code, "provider_error");
    assert.equal(e.details, { provider: "openai", reason: "bad_response" });
    assert.is(e.retryable, true);
    assert.match(e.message, "stream ended early");
  } finally {
    await api.close();
  }
});

test("an unreachable endpoint is provider_error unreachable (retryable) with the network cause", async () => {
  const gone = await chatServer(() => {});
  await gone.close();
  const e = await failureOf(collect(provider(gone.base)));
  assert.instance(e, ModelCallError);
  assert.is(e.code, "provider_error");
  assert.equal(e.details, { provider: "openai", reason: "unreachable" });
  assert.is(e.retryable, true);
  assert.match(e.message, "ECONNREFUSED");
});

test("aborting mid-stream rejects promptly with the abort (not a ModelCallError) and the server sees the request closed", async () => {
  const api = await chatServer((res) => (sse(res), res.write(delta({ content: "first" }))));
  try {
    const abort = new AbortController();
    const seen: string[] = [];
    let abortedAt = 0;
    const e = await within(
      failureOf(
        (async () => {
          for await (const ev of provider(api.base).stream(hi, ctx(abort.signal))) {
            if (ev.type !== "text_delta") continue;
            seen.push(ev.text);
            abortedAt = Date.now();
            abort.abort();
          }
        })(),
      ),
      2000,
      "the iteration did not stop after the abort",
    );
    assert.ok(Date.now() - abortedAt < 2000);
    assert.equal(seen, ["first"]);
    assert.is(e.name, "AbortError");
    assert.not.instance(e, ModelCallError);
    await within(api.closedEarly, 2000, "the server never saw the request closed");
  } finally {
    await api.close();
  }
});

test("an abort with a reason before the response headers rejects with that reason and closes the request", async () => {
  const arrived = deferred();
  const api = await chatServer(() => arrived.resolve()); // never answers
  try {
    const abort = new AbortController();
    const pending = failureOf(collect(provider(api.base), hi, abort.signal));
    await within(arrived.promise, 5000, "the request never reached the server");
    const reason = new Error("turn cancelled");
    abort.abort(reason);
    const e = await within(pending, 2000, "the call did not stop after the abort");
    assert.is(e, reason);
    await within(api.closedEarly, 2000, "the server never saw the request closed");
  } finally {
    await api.close();
  }
});

test("events already received in the same chunk are not delivered after an abort", async () => {
  // One write holds the whole answer, [DONE] included: only the abort check can stop it completing.
  const api = await chatServer((res) => (sse(res), res.end(delta({ content: "a" }) + delta({ content: "b" }) + delta({ content: "c" }, "stop") + DONE)));
  try {
    const abort = new AbortController();
    const seen: ModelStreamEvent[] = [];
    const e = await failureOf(
      (async () => {
        for await (const ev of provider(api.base).stream(hi, ctx(abort.signal))) {
          seen.push(ev);
          abort.abort();
        }
      })(),
    );
    assert.equal(seen, [{ type: "text_delta", text: "a" }]);
    assert.is(e.name, "AbortError");
  } finally {
    await api.close();
  }
});

test("a consumer that stops iterating early closes the HTTP request", async () => {
  const api = await chatServer((res) => (sse(res), res.write(delta({ content: "enough" }))));
  try {
    for await (const ev of provider(api.base).stream(hi, ctx())) {
      if (ev.type === "text_delta") break;
    }
    await within(api.closedEarly, 2000, "the server never saw the request closed");
  } finally {
    await api.close();
  }
});

test.run();
