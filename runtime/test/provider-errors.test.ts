// What a client of Brain gets when the model provider fails: a real HTTP server on loopback plays
// the OpenAI- or Anthropic-compatible upstream (401 invalid_api_key, 403, 429, 500, 529, a stream
// that is not JSON, a stream cut short, an error inside the stream) or is not there at all
// (connection refused). The client sends a message with `wait: true` to a real runtime and reads
// the answer and the journal: every case is `provider_error` with the reason, upstream status and
// retryability the contract's ProviderErrorDetails promises, and no record anywhere says `internal`
// (which is reserved for bugs).
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { ServerResponse } from "node:http";
import { issues } from "@aexhq/brain-protocol";
import { api, memoryBrain, records, assertJournal } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { providerServer, sse } from "./helpers/provider-server.ts";

type Answer = (res: ServerResponse) => void;
type Upstream = Awaited<ReturnType<typeof providerServer>>;

const json = (status: number, body: unknown): Answer => (res) => (res.writeHead(status, { "content-type": "application/json" }), res.end(JSON.stringify(body)));
const stream = (text: string): Answer => (res) => (sse(res), res.end(text));
const data = (o: unknown) => `data: ${typeof o === "string" ? o : JSON.stringify(o)}\n\n`;
const event = (type: string, o: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;

interface Case {
  name: string;
  answer: Answer;
  details: Record<string, unknown>;
  retryable: boolean;
  message: RegExp;
}

const OPENAI: Case[] = [
  {
    name: "401 invalid_api_key",
    answer: json(401, { error: { message: "Incorrect API key provided: sk-wrong.", type: "invalid_request_error", param: null, code: "invalid_api_key" } }),
    details: { provider: "openai", reason: "unauthorized", status: 401, type: "invalid_api_key" },
    retryable: false,
    message: /^openai answered HTTP 401: Incorrect API key provided/,
  },
  {
    name: "403",
    answer: json(403, { error: { message: "Project does not have access to model gpt-test.", type: "invalid_request_error", code: "model_not_found" } }),
    details: { provider: "openai", reason: "unauthorized", status: 403, type: "model_not_found" },
    retryable: false,
    message: /HTTP 403: Project does not have access/,
  },
  {
    name: "429",
    answer: json(429, { error: { message: "Rate limit reached.", type: "requests", code: "rate_limit_exceeded" } }),
    details: { provider: "openai", reason: "rate_limited", status: 429, type: "rate_limit_exceeded" },
    retryable: true,
    message: /HTTP 429: Rate limit reached/,
  },
  {
    name: "500 with an HTML body",
    answer: (res) => (res.writeHead(500, { "content-type": "text/html" }), res.end("<html>Internal Server Error</html>")),
    details: { provider: "openai", reason: "unavailable", status: 500 },
    retryable: true,
    message: /HTTP 500: <html>Internal Server Error/,
  },
  {
    name: "400 (a request the provider refuses)",
    answer: json(400, { error: { message: "maximum context length exceeded", type: "invalid_request_error", code: "context_length_exceeded" } }),
    details: { provider: "openai", reason: "rejected", status: 400, type: "context_length_exceeded" },
    retryable: false,
    message: /HTTP 400: maximum context length/,
  },
  {
    name: "a stream that is not JSON",
    answer: stream(data("this is not json")),
    details: { provider: "openai", reason: "bad_response" },
    retryable: false,
    message: /not JSON: this is not json/,
  },
  {
    name: "a stream cut short (no [DONE])",
    answer: stream(data({ choices: [{ index: 0, delta: { content: "Hal" }, finish_reason: null }] })),
    details: { provider: "openai", reason: "bad_response" },
    retryable: true,
    message: /stream ended early/,
  },
  {
    name: "an error object inside the stream",
    answer: stream(data({ error: { message: "The server had an error while processing your request.", type: "server_error" } })),
    details: { provider: "openai", reason: "stream_error", type: "server_error" },
    retryable: true,
    message: /^openai: The server had an error/,
  },
];

const ANTHROPIC: Case[] = [
  {
    name: "401 authentication_error",
    answer: json(401, { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } }),
    details: { provider: "anthropic", reason: "unauthorized", status: 401, type: "authentication_error" },
    retryable: false,
    message: /^anthropic answered HTTP 401: invalid x-api-key/,
  },
  {
    name: "529 overloaded",
    answer: json(529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
    details: { provider: "anthropic", reason: "unavailable", status: 529, type: "overloaded_error" },
    retryable: true,
    message: /HTTP 529: Overloaded/,
  },
  {
    name: "an error event inside the stream",
    answer: stream(event("message_start", { message: { usage: { input_tokens: 3, output_tokens: 0 } } }) + event("error", { error: { type: "overloaded_error", message: "Overloaded" } })),
    details: { provider: "anthropic", reason: "stream_error", type: "overloaded_error" },
    retryable: true,
    message: /^anthropic: Overloaded/,
  },
];

let answer: Answer = () => {};
let upstream: Upstream;
let gone: string;
let brain: Brain;

test.before(async () => {
  upstream = await providerServer((res) => answer(res));
  // A port that was just listening and is closed now: connection refused.
  const closed = await providerServer(() => {});
  await closed.close();
  gone = closed.base;
  brain = await memoryBrain({
    models: {
      openai: { apiKey: "sk-wrong", baseUrl: `${upstream.base}/v1`, allowedBaseUrls: [`${gone}/v1`] },
      anthropic: { apiKey: "sk-ant-wrong", baseUrl: upstream.base },
    },
  });
});

test.after(async () => {
  await brain?.close();
  await upstream?.close();
});

/** A session on `model`, one message with `wait: true`: the answer and the session's whole journal. */
async function turn(model: Record<string, unknown>) {
  const created = await api(brain, "POST", "/v1/sessions", { model, tools: [] });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const sent = await api(brain, "POST", `/v1/sessions/${created.body.id}/messages`, { text: "Hello?", wait: true });
  const journal = await records(brain, created.body.id);
  return { sent, journal };
}

/** The answer is a failed turn with this provider_error, journaled the same way, and nothing in it says internal. */
function assertProviderError(what: string, sent: { status: number; body: any }, journal: Awaited<ReturnType<typeof records>>, expected: Omit<Case, "name" | "answer">) {
  assert.is(sent.status, 200, `${what}: ${JSON.stringify(sent.body)}`);
  assert.is(sent.body.status, "failed", what);
  const error = sent.body.error;
  assert.is(error.code, "provider_error", `${what}: ${JSON.stringify(error)}`);
  assert.equal(error.details, expected.details, what);
  assert.is(error.retryable, expected.retryable, `${what}: retryable`);
  assert.match(error.message, expected.message, what);
  assert.equal(issues("ProviderErrorDetails", error.details), [], `${what}: details match the contract`);
  // The operator's key is never quoted back (the provider's 401 message may carry it).
  assert.not.match(JSON.stringify(sent.body), /sk-wrong|sk-ant-wrong/, what);
  assertJournal(journal);
  const failed = journal.find((r) => r.type === "turn.failed");
  assert.equal((failed?.data as { error?: unknown } | undefined)?.error, error, `${what}: turn.failed carries the same error`);
  const response = journal.find((r) => r.type === "model.response");
  assert.is((response?.data as { error?: { code: string } }).error?.code, "provider_error", `${what}: model.response`);
  assert.not.match(JSON.stringify(journal), /"code":"internal"/, `${what}: a journal record says internal`);
}

test("OpenAI-compatible upstream: 401, 403, 429, 500, 400, a non-JSON stream, a cut stream and an in-stream error each reach the client as provider_error, never internal", async () => {
  for (const c of OPENAI) {
    answer = c.answer;
    const { sent, journal } = await turn({ provider: "openai", model: "gpt-test" });
    assertProviderError(`openai ${c.name}`, sent, journal, c);
  }
  // The upstream really was asked, once per case, with the operator's key.
  const asked = upstream.received.filter((r) => r.path === "/v1/chat/completions");
  assert.is(asked.length, OPENAI.length);
  assert.is(asked[0]!.headers.authorization, "Bearer sk-wrong");
});

test("Anthropic-compatible upstream: 401, 529 and an error event each reach the client as provider_error, never internal", async () => {
  for (const c of ANTHROPIC) {
    answer = c.answer;
    const { sent, journal } = await turn({ provider: "anthropic", model: "claude-test" });
    assertProviderError(`anthropic ${c.name}`, sent, journal, c);
  }
});

test("an upstream that refuses the connection is provider_error unreachable (retryable), never internal", async () => {
  const { sent, journal } = await turn({ provider: "openai", model: "gpt-test", baseUrl: `${gone}/v1` });
  assertProviderError("connection refused", sent, journal, {
    details: { provider: "openai", reason: "unreachable" },
    retryable: true,
    message: /could not be reached at .*ECONNREFUSED/,
  });
});

test("a 401 and a 429 are told apart by reason and retryable alone (what a client branches on)", async () => {
  const seen: Array<[unknown, unknown]> = [];
  for (const status of [401, 429, 503]) {
    answer = json(status, { error: { message: `status ${status}` } });
    const { sent } = await turn({ provider: "openai", model: "gpt-test" });
    seen.push([sent.body.error.details.reason, sent.body.error.retryable]);
  }
  assert.equal(seen, [["unauthorized", false], ["rate_limited", true], ["unavailable", true]]);
});

test.run();
