// The Application tool extension end to end: a real runtime, the tools served by httpTools() behind
// a real node:http server on loopback, sessions placed on httpEnv({ url }).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { startBrain } from "@aexhq/brain-runtime";
import { Brain, tool, httpEnv, httpTools } from "../src/index.ts";
import type { JournalRecord } from "../src/index.ts";
import { records, scripted, ofCall, callIds, sleep, deferred } from "./helpers/brain.mts";

/** A fetch-style handler behind node:http; the Request's signal aborts when the client goes away. */
async function serveFetch(handler: (r: Request) => Promise<Response>): Promise<{ url: string; hits: () => number; close(): Promise<void> }> {
  let hits = 0;
  const server = createServer(async (req, res) => {
    hits++;
    const abort = new AbortController();
    res.on("close", () => res.writableFinished || abort.abort());
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const request = new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers: req.headers as Record<string, string>, body: req.method === "GET" ? undefined : Buffer.concat(chunks), signal: abort.signal });
    const response = await handler(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/brain/tools`;
  return { url, hits: () => hits, close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))) };
}

const seen: Record<string, unknown> = {};
/**
 * Whether the journal held the finish when `await ctx.finish` resolved. A deferred, not a field: the
 * tool reads the journal after its finish, while the turn (on another socket) may already have ended.
 */
const finishedBeforeAck = deferred<boolean>();

const lookup = tool({
  name: "lookup", description: "Look up one record.",
  input: z.object({ id: z.string().default("0") }),
  output: z.object({ value: z.string() }),
  options: z.object({ prefix: z.string() }),
  run: async ({ id }, ctx) => {
    await ctx.emitResult({ value: "partial" }, { content: "looking" });
    seen.emit = await ctx.emit("started", {}).then(() => "resolved", (e) => e.code);
    seen.model = await ctx.model({ messages: [{ role: "user", content: "x" }] }).then(() => "resolved", (e) => e.code);
    seen.environments = await ctx.environments.list().then(() => "resolved", (e) => e.code);
    seen.context = { sessionId: ctx.sessionId, sequence: ctx.sequence, options: ctx.options };
    await ctx.finish({ value: `${ctx.options.prefix}${id}` }, { content: `found ${id}` });
    finishedBeforeAck.resolve(await journalHasFinished());
  },
});
const returns = tool({ name: "returns", description: "Return a value.", input: z.object({}), output: z.object({ n: z.number() }), run: async () => ({ n: 1 }) });
const silent = tool({ name: "silent", description: "Return nothing.", input: z.object({}), run: async () => undefined });
const broken = tool({ name: "broken", description: "Throw or break the output.", input: z.object({ how: z.enum(["throw", "output"]) }), output: z.object({ n: z.number() }), run: async ({ how }) => (how === "throw" ? Promise.reject(new Error("boom")) : { n: "not a number" } as never) }); // wrong on purpose: the runtime check, past the type check
const slow = tool({
  name: "slow", description: "Wait for the signal.", input: z.object({}),
  run: async (_i, ctx) => {
    await new Promise<void>((r) => ctx.signal.addEventListener("abort", () => r(), { once: true }));
    seen.slowAborted = true;
  },
});

let journalHasFinished: () => Promise<boolean> = async () => false;

async function setup() {
  const app = await serveFetch(async (r) => handler(r));
  const runtime = await startBrain({ dataDir: ":memory:", port: 0, httpToolOrigins: [new URL(app.url).origin] });
  const handler = httpTools([lookup, returns, silent, broken, slow], { brainUrl: runtime.url });
  const brain = new Brain({ url: runtime.url, token: runtime.token });
  return { app, runtime, brain, env: httpEnv({ url: app.url }), close: async () => (await brain.close(), await runtime.close(), await app.close()) };
}

const finishedOf = (all: JournalRecord[], callId: string) => ofCall(all, callId).find((r) => r.type === "tool.finished") as any;

test("a tool served over HTTP: results, content and an acknowledged finish reach the journal; emit and model are refused", async () => {
  const t = await setup();
  try {
    const session = await t.brain.sessions.create({ model: scripted({ toolCalls: [{ name: "lookup", input: { id: "42" } }] }, { text: "done" }), tools: [lookup({ env: t.env, prefix: "customer:" })] });
    journalHasFinished = async () => (await records(session)).some((r) => r.type === "tool.finished");
    assert.is(await session.send("go"), "done");
    const all = await records(session);
    const [id] = callIds(all);
    const calls = ofCall(all, id!);
    assert.equal(calls.map((r) => r.type), ["tool.call_started", "tool.result", "tool.result", "tool.finished"]);
    assert.equal((calls[1] as any).data, { callId: id, outcome: { status: "ok", value: { value: "partial" } }, content: "looking" });
    assert.equal((calls[2] as any).data.outcome, { status: "ok", value: { value: "customer:42" } });
    assert.is(finishedOf(all, id!).data.status, "ok");
    assert.is(await finishedBeforeAck.promise, true, "await ctx.finish resolved after the durable commit");
    assert.is(seen.emit, "unsupported");
    assert.is(seen.model, "unsupported");
    assert.is(seen.environments, "unsupported", "the extension grants no Environment control");
    assert.equal(seen.context, { sessionId: session.id, sequence: calls[0]!.sequence, options: { prefix: "customer:" } });
  } finally {
    await t.close();
  }
});

test("returning a value publishes it and finishes; returning nothing finishes without a result (no work beyond the request)", async () => {
  const t = await setup();
  try {
    const session = await t.brain.sessions.create({ model: scripted({ toolCalls: [{ name: "returns", input: {} }, { name: "silent", input: {} }] }, { text: "done" }), tools: [returns({ env: t.env }), silent({ env: t.env })] });
    await session.send("go");
    const all = await records(session);
    const [a, b] = callIds(all);
    assert.equal(ofCall(all, a!).map((r) => r.type), ["tool.call_started", "tool.result", "tool.finished"]);
    assert.equal((ofCall(all, a!)[1] as any).data.outcome, { status: "ok", value: { n: 1 } });
    assert.equal(ofCall(all, b!).map((r) => r.type), ["tool.call_started", "tool.finished"]);
    assert.is(finishedOf(all, b!).data.status, "ok");
  } finally {
    await t.close();
  }
});

test("the outcome rules hold over HTTP: invalid input never runs, invalid output and throws are errors", async () => {
  const t = await setup();
  try {
    const calls = [{ name: "broken", input: { how: "sideways" } }, { name: "broken", input: { how: "output" } }, { name: "broken", input: { how: "throw" } }];
    const session = await t.brain.sessions.create({ model: scripted({ toolCalls: calls }, { text: "done" }), tools: [broken({ env: t.env })] });
    await session.send("go");
    const all = await records(session);
    assert.equal(callIds(all).map((id) => finishedOf(all, id).data.error?.code), ["invalid_input", "invalid_output", "tool_error"]);
  } finally {
    await t.close();
  }
});

test("a deadline ends the call timeout and aborts the request, so the tool's signal fires", async () => {
  const t = await setup();
  try {
    // 1 s: a request that reaches the handler after the deadline never runs the tool (nothing to abort),
    // and a loaded machine can take a few hundred ms to deliver it.
    const session = await t.brain.sessions.create({ model: scripted({ toolCalls: [{ name: "slow", input: {}, deadlineMs: 1000 }] }, { text: "done" }), tools: [slow({ env: t.env })] });
    await session.send("go");
    const all = await records(session);
    assert.is(finishedOf(all, callIds(all)[0]!).data.status, "timeout");
    for (let i = 0; i < 250 && !seen.slowAborted; i++) await sleep(20);
    assert.is(seen.slowAborted, true);
  } finally {
    await t.close();
  }
});

test("session creation refuses an endpoint whose origin the operator did not allow (403 forbidden)", async () => {
  const t = await setup();
  try {
    const elsewhere = lookup({ env: httpEnv({ url: "http://127.0.0.2:9/tools" }), prefix: "p" });
    const err = await t.brain.sessions.create({ model: scripted({ text: "x" }), tools: [elsewhere] }).then(() => undefined, (e) => e);
    assert.is(err?.code, "forbidden");
    assert.match(err.message, "BRAIN_HTTP_TOOL_ORIGINS");
  } finally {
    await t.close();
  }
});

test("the endpoint runs nothing for a forged invocation, and Brain refuses a wrong or expired callback token", async () => {
  const t = await setup();
  try {
    const contract = await lookup.tool.contract();
    const forged = { protocol: "brain.http/0.2", callId: "ses_x:3", sessionId: "ses_x", sequence: 3, tool: "lookup", digest: contract.digest, input: { id: "1" }, options: { prefix: "p" }, deadlineAt: null, token: "a-token-brain-never-issued" };
    const post = (body: unknown) => fetch(t.app.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    seen.context = undefined;
    const unclaimed = await post({ ...forged, callback: `${t.runtime.url}/v1/calls/ses_x%3A3/http` });
    assert.is(unclaimed.status, 401);
    const foreign = await post({ ...forged, callback: "http://127.0.0.1:1/v1/calls/ses_x%3A3/http" });
    assert.is(foreign.status, 403);
    assert.is((await post({ nope: true })).status, 400);
    assert.is(seen.context, undefined, "the tool never ran");
    // Straight at Brain: a token that is not the open call's is 401 before the body is read.
    const direct = await fetch(`${t.runtime.url}/v1/calls/ses_x%3A3/http`, { method: "POST", headers: { authorization: "Bearer wrong-token-wrong-token", "content-type": "application/json" }, body: JSON.stringify({ type: "finish" }) });
    assert.is(direct.status, 401);
    assert.is(((await direct.json()) as any).error.code, "unauthorized");
  } finally {
    await t.close();
  }
});

test("an endpoint that fails its request ends the call tool_error with the HTTP status", async () => {
  const app = await serveFetch(async () => new Response("down for maintenance", { status: 503 }));
  const runtime = await startBrain({ dataDir: ":memory:", port: 0, httpToolOrigins: [new URL(app.url).origin] });
  const brain = new Brain({ url: runtime.url, token: runtime.token });
  try {
    const session = await brain.sessions.create({ model: scripted({ toolCalls: [{ name: "returns", input: {} }] }, { text: "done" }), tools: [returns({ env: httpEnv({ url: app.url }) })] });
    await session.send("go");
    const all = await records(session);
    const f = finishedOf(all, callIds(all)[0]!);
    assert.is(f.data.error.code, "tool_error");
    assert.match(f.data.error.message, "HTTP 503: down for maintenance");
    assert.is(app.hits(), 1, "sent once, never retried");
  } finally {
    await brain.close();
    await runtime.close();
    await app.close();
  }
});

test.run();
