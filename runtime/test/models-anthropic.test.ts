// The Anthropic provider against a real local HTTP server speaking Messages streaming: named SSE
// events written in small pieces with delays, split mid-line, mid-JSON and mid-UTF-8 character,
// and held back until the client proves it has already seen the first delta.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { ModelRequest, ModelResult } from "@aexhq/brain-protocol";
import { AnthropicProvider } from "../src/models/anthropic.ts";
import { ModelCallError } from "../src/models/provider.ts";
import type { ModelStreamEvent } from "../src/models/provider.ts";
import { providerServer, deferred, within, sse, trickle } from "./helpers/provider-server.ts";

const messagesServer = (answer: Parameters<typeof providerServer>[0]) => providerServer(answer);
const ev = (type: string, data: object = {}) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const start = (inputTokens = 10) => ev("message_start", { message: { id: "msg_1", type: "message", role: "assistant", content: [], model: "claude-test", stop_reason: null, usage: { input_tokens: inputTokens, output_tokens: 1 } } });
const textBlock = (index: number, ...texts: string[]) =>
  ev("content_block_start", { index, content_block: { type: "text", text: "" } }) +
  texts.map((text) => ev("content_block_delta", { index, delta: { type: "text_delta", text } })).join("") +
  ev("content_block_stop", { index });
const toolBlock = (index: number, id: string, name: string, ...parts: string[]) =>
  ev("content_block_start", { index, content_block: { type: "tool_use", id, name, input: {} } }) +
  parts.map((partial_json) => ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } })).join("") +
  ev("content_block_stop", { index });
const end = (stopReason: string, outputTokens = 5) => ev("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: outputTokens } }) + ev("message_stop");

const provider = (base: string) => new AnthropicProvider({ model: "claude-test", baseUrl: base, apiKey: "sk-ant-test" });
const ctx = (signal = new AbortController().signal) => ({ sessionId: "ses_test", index: 0, signal });
const hi: ModelRequest = { messages: [{ role: "user", content: "hi" }] };

async function collect(p: AnthropicProvider, request: ModelRequest = hi, signal?: AbortSignal): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = [];
  for await (const e of p.stream(request, ctx(signal))) out.push(e);
  return out;
}

const resultOf = (events: ModelStreamEvent[]): ModelResult => {
  const last = events.at(-1);
  assert.is(last?.type, "done", "the stream ends with done");
  return (last as Extract<ModelStreamEvent, { type: "done" }>).result;
};

const failureOf = (p: Promise<unknown>): Promise<any> => p.then(() => assert.unreachable("expected a failure"), (e) => e);
const ok = start() + textBlock(0, "ok") + end("end_turn");

test("the request body maps system, text, tool_use blocks, tool results, tool specs and max tokens; headers carry the key and API version", async () => {
  const api = await messagesServer((res) => (sse(res), res.end(ok)));
  try {
    const request: ModelRequest = {
      system: "Be brief.",
      messages: [
        { role: "user", content: "Find 42." },
        { role: "assistant", content: "Looking.", toolCalls: [{ id: "toolu_1", name: "lookup", input: { id: "42" } }] },
        { role: "tool", toolCallId: "toolu_1", content: "Ada" },
        { role: "assistant", content: "It is Ada." },
        { role: "user", content: "Thanks." },
      ],
      tools: [{ name: "lookup", description: "Look up one record.", inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } }],
      maxTokens: 50,
    };
    await collect(new AnthropicProvider({ model: "claude-x", baseUrl: `${api.base}/`, apiKey: "sk-ant-1" }), request);
    const [r] = api.received;
    assert.is(r!.method, "POST");
    assert.is(r!.path, "/v1/messages", "a trailing slash on baseUrl is stripped");
    assert.is(r!.headers["x-api-key"], "sk-ant-1");
    assert.is(r!.headers["anthropic-version"], "2023-06-01");
    assert.is(r!.headers["content-type"], "application/json");
    assert.is(r!.headers.authorization, undefined);
    assert.equal(r!.body, {
      model: "claude-x",
      max_tokens: 50,
      stream: true,
      system: "Be brief.",
      messages: [
        { role: "user", content: [{ type: "text", text: "Find 42." }] },
        { role: "assistant", content: [{ type: "text", text: "Looking." }, { type: "tool_use", id: "toolu_1", name: "lookup", input: { id: "42" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "Ada" }] },
        { role: "assistant", content: [{ type: "text", text: "It is Ada." }] },
        { role: "user", content: [{ type: "text", text: "Thanks." }] },
      ],
      tools: [{ name: "lookup", description: "Look up one record.", input_schema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } }],
    });
  } finally {
    await api.close();
  }
});

test("consecutive tool results become one user message, and adjacent messages of one role merge so roles alternate", async () => {
  const api = await messagesServer((res) => (sse(res), res.end(ok)));
  try {
    await collect(provider(api.base), {
      messages: [
        { role: "user", content: "First." },
        { role: "user", content: "Second." },
        { role: "assistant", content: "Two lookups." },
        { role: "assistant", content: "", toolCalls: [{ id: "toolu_1", name: "lookup", input: { id: "1" } }, { id: "toolu_2", name: "lookup", input: { id: "2" } }] },
        { role: "tool", toolCallId: "toolu_1", content: "Ada" },
        { role: "tool", toolCallId: "toolu_2", content: "Grace" },
        { role: "user", content: "And now?" },
        { role: "assistant", content: "" }, // says nothing: dropped, so the user turns around it merge
        { role: "user", content: "Hello?" },
      ],
    });
    assert.equal(api.received[0]!.body.messages, [
      { role: "user", content: [{ type: "text", text: "First." }, { type: "text", text: "Second." }] },
      {
        role: "assistant",
        content: [{ type: "text", text: "Two lookups." }, { type: "tool_use", id: "toolu_1", name: "lookup", input: { id: "1" } }, { type: "tool_use", id: "toolu_2", name: "lookup", input: { id: "2" } }],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "Ada" },
          { type: "tool_result", tool_use_id: "toolu_2", content: "Grace" },
          { type: "text", text: "And now?" },
          { type: "text", text: "Hello?" },
        ],
      },
    ]);
  } finally {
    await api.close();
  }
});

test("a JSON response format becomes an answer-only-JSON instruction in the system prompt (with the schema when given); max_tokens defaults to 4096; no key, no x-api-key", async () => {
  const api = await messagesServer((res) => (sse(res), res.end(ok)));
  const schema = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };
  try {
    const keyless = new AnthropicProvider({ model: "claude-test", baseUrl: api.base, apiKey: undefined });
    await collect(keyless, { system: "Be brief.", messages: [{ role: "user", content: "who?" }], responseFormat: { type: "json", schema } });
    await collect(keyless, { messages: [{ role: "user", content: "who?" }], responseFormat: { type: "json" } });
    await collect(keyless, { messages: [{ role: "user", content: "who?" }], responseFormat: { type: "text" }, tools: [] });
    const [withSchema, bare, text] = api.received;
    assert.is(withSchema!.headers["x-api-key"], undefined);
    assert.is(withSchema!.headers["anthropic-version"], "2023-06-01");
    assert.is(withSchema!.body.max_tokens, 4096);
    assert.is(withSchema!.body.system, `Be brief.\n\nAnswer with only a JSON value matching this JSON Schema, no other text: ${JSON.stringify(schema)}`);
    assert.is(bare!.body.system, "Answer with only a JSON value, no other text.");
    assert.equal(text!.body, { model: "claude-test", max_tokens: 4096, stream: true, messages: [{ role: "user", content: [{ type: "text", text: "who?" }] }] });
  } finally {
    await api.close();
  }
});

test("text deltas arrive while the server still holds the response open; split bytes, CRLF, pings and comments decode", async () => {
  const release = deferred();
  let serverDone = false;
  const api = await messagesServer(async (res) => {
    sse(res);
    res.write(start(21) + ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }) + ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Let " } }));
    await release.promise; // nothing more until the client has yielded the first delta
    await trickle(
      res,
      ev("ping") +
        ": a comment line\n" +
        ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "me lööк 🔎 " } }).replace(/\n/g, "\r\n") +
        ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "now." } }) +
        ev("content_block_stop", { index: 0 }) +
        end("end_turn", 8),
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
        for await (const e of provider(api.base).stream(hi, ctx())) {
          events.push(e);
          if (events.length === 1) {
            doneAtFirstDelta = serverDone;
            release.resolve();
          }
        }
      })(),
      10_000,
      "the first delta never arrived while the server held the response",
    );
    assert.equal(events[0], { type: "text_delta", text: "Let " });
    assert.is(doneAtFirstDelta, false, "the first delta came before the server finished");
    assert.equal(
      events.flatMap((e) => (e.type === "text_delta" ? [e.text] : [])),
      ["Let ", "me lööк 🔎 ", "now."],
    );
    assert.equal(resultOf(events), { text: "Let me lööк 🔎 now.", toolCalls: [], stopReason: "end", usage: { inputTokens: 21, outputTokens: 8 } });
  } finally {
    release.resolve();
    await api.close();
  }
});

test("tool_use input split across input_json_delta events is assembled, an empty input is {}, and each call is yielded when its block stops", async () => {
  const api = await messagesServer(async (res) => {
    sse(res);
    await trickle(
      res,
      start(40) +
        textBlock(0, "Two calls.") +
        toolBlock(1, "toolu_a", "lookup", "", '{"id": "4', '2", "tags": ["ä", ', "1]}") +
        toolBlock(2, "toolu_b", "now") +
        end("tool_use", 33),
      4,
    );
    res.end();
  });
  try {
    const events = await collect(provider(api.base));
    const calls = [
      { id: "toolu_a", name: "lookup", input: { id: "42", tags: ["ä", 1] } },
      { id: "toolu_b", name: "now", input: {} },
    ];
    assert.equal(events.slice(0, -1), [{ type: "text_delta", text: "Two calls." }, ...calls.map((call) => ({ type: "tool_call", call }))]);
    assert.equal(resultOf(events), { text: "Two calls.", toolCalls: calls, stopReason: "tool_calls", usage: { inputTokens: 40, outputTokens: 33 } });
  } finally {
    await api.close();
  }
});

test("stop reasons map: end_turn and stop_sequence to end, tool_use to tool_calls, max_tokens to length, anything else to error", async () => {
  const cases: Array<[string, ModelResult["stopReason"]]> = [["end_turn", "end"], ["stop_sequence", "end"], ["tool_use", "tool_calls"], ["max_tokens", "length"], ["refusal", "error"]];
  let reason = "end_turn";
  const api = await messagesServer((res) => (sse(res), res.end(start(3) + textBlock(0, "x") + end(reason, 2))));
  try {
    for (const [r, stopReason] of cases) {
      reason = r;
      const result = resultOf(await collect(provider(api.base)));
      assert.is(result.stopReason, stopReason, r);
      assert.equal(result.usage, { inputTokens: 3, outputTokens: 2 });
    }
  } finally {
    await api.close();
  }
});

test("each HTTP error status is provider_error with its reason, retryable, the status and Anthropic's error type in details, and Anthropic's message", async () => {
  const cases: Array<[number, string, boolean]> = [
    [400, "rejected", false],
    [401, "unauthorized", false],
    [403, "unauthorized", false],
    [404, "rejected", false],
    [429, "rate_limited", true],
    [500, "unavailable", true],
    [529, "unavailable", true],
  ];
  let status = 400;
  const api = await messagesServer((res) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify({ type: "error", error: { type: "some_error", message: `Problem number ${status}.` } }));
  });
  try {
    for (const [s, reason, retryable] of cases) {
      status = s;
      const e = await failureOf(collect(provider(api.base)));
      assert.instance(e, ModelCallError, `${s}`);
      assert.is(e.code, "provider_error", `${s} code`);
      assert.is(e.retryable, retryable, `${s} retryable`);
      assert.equal(e.details, { provider: "anthropic", reason, status: s, type: "some_error" }, `${s} details`);
      assert.is(e.message, `anthropic answered HTTP ${s}: Problem number ${s}.`);
    }
  } finally {
    await api.close();
  }
});

test("a non-JSON error body is surfaced as its first 200 characters", async () => {
  const page = `upstream connect error or disconnect/reset before headers. ${"x".repeat(300)}`;
  const api = await messagesServer((res) => (res.writeHead(503, { "content-type": "text/plain" }), res.end(page)));
  try {
    const e = await failureOf(collect(provider(api.base)));
    assert.is(e.code, "provider_error");
    assert.equal(e.details, { provider: "anthropic", reason: "unavailable", status: 503 });
    assert.is(e.retryable, true);
    assert.is(e.message, `anthropic answered HTTP 503: ${page.slice(0, 200)}`);
  } finally {
    await api.close();
  }
});

test("an error event mid-stream fails the call provider_error stream_error after the deltas before it (overloaded is retryable)", async () => {
  const api = await messagesServer((res) => {
    sse(res);
    res.end(start() + ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }) + ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Hal" } }) + ev("error", { error: { type: "overloaded_error", message: "Overloaded" } }));
  });
  try {
    const seen: ModelStreamEvent[] = [];
    const e = await failureOf(
      (async () => {
        for await (const x of provider(api.base).stream(hi, ctx())) seen.push(x);
      })(),
    );
    assert.equal(seen, [{ type: "text_delta", text: "Hal" }]);
    assert.instance(e, ModelCallError);
    assert.is(e.code, "provider_error");
    assert.equal(e.details, { provider: "anthropic", reason: "stream_error", type: "overloaded_error" });
    assert.is(e.retryable, true);
    assert.match(e.message, "Overloaded");
  } finally {
    await api.close();
  }
});

test("malformed tool_use input JSON is invalid_output naming the tool", async () => {
  const api = await messagesServer((res) => (sse(res), res.end(start() + toolBlock(0, "toolu_1", "lookup", '{"id": ', "4") + end("tool_use"))));
  try {
    const e = await failureOf(collect(provider(api.base)));
    assert.instance(e, ModelCallError);
    assert.is(e.code, "invalid_output");
    assert.match(e.message, "lookup");
  } finally {
    await api.close();
  }
});

test("a stream that ends without message_stop fails provider_error 'stream ended early' (retryable)", async () => {
  const api = await messagesServer((res) => (sse(res), res.end(start() + textBlock(0, "partial") + ev("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } }))));
  try {
    const e = await failureOf(collect(provider(api.base)));
    assert.instance(e, ModelCallError);
    assert.is(e.code, "provider_error");
    assert.equal(e.details, { provider: "anthropic", reason: "bad_response" });
    assert.is(e.retryable, true);
    assert.match(e.message, "stream ended early");
  } finally {
    await api.close();
  }
});

test("an unreachable endpoint is provider_error unreachable (retryable) with the network cause", async () => {
  const gone = await messagesServer(() => {});
  await gone.close();
  const e = await failureOf(collect(provider(gone.base)));
  assert.instance(e, ModelCallError);
  assert.is(e.code, "provider_error");
  assert.equal(e.details, { provider: "anthropic", reason: "unreachable" });
  assert.is(e.retryable, true);
  assert.match(e.message, "ECONNREFUSED");
});

test("aborting mid-stream rejects promptly with the abort reason (not a ModelCallError) and the server sees the request closed", async () => {
  const api = await messagesServer((res) => {
    sse(res);
    res.write(start() + ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }) + ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: "first" } }));
  });
  try {
    const abort = new AbortController();
    const reason = new Error("deadline reached");
    const seen: string[] = [];
    const e = await within(
      failureOf(
        (async () => {
          for await (const x of provider(api.base).stream(hi, ctx(abort.signal))) {
            if (x.type !== "text_delta") continue;
            seen.push(x.text);
            abort.abort(reason);
          }
        })(),
      ),
      2000,
      "the iteration did not stop after the abort",
    );
    assert.equal(seen, ["first"]);
    assert.is(e, reason);
    assert.not.instance(e, ModelCallError);
    await within(api.closedEarly, 2000, "the server never saw the request closed");
  } finally {
    await api.close();
  }
});

test("an abort while the server has not answered yet rejects with an AbortError and closes the request", async () => {
  const arrived = deferred();
  const api = await messagesServer(() => arrived.resolve()); // never answers
  try {
    const abort = new AbortController();
    const pending = failureOf(collect(provider(api.base), hi, abort.signal));
    await within(arrived.promise, 5000, "the request never reached the server");
    abort.abort();
    const e = await within(pending, 2000, "the call did not stop after the abort");
    assert.is(e.name, "AbortError");
    await within(api.closedEarly, 2000, "the server never saw the request closed");
  } finally {
    await api.close();
  }
});

test.run();
