// session.send(): one Idempotency-Key per call, reused on its own retries (the runtime's wait bound,
// a runtime restart), so a message never runs twice (issue 26). A real runtime on loopback; its
// requests are counted by a route an Environment plugin adds (it passes every request on).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { IncomingMessage } from "node:http";
import { z } from "zod";
import { defaultEnvironments, startBrain } from "@aexhq/brain-runtime";
import type { EnvironmentPlugin } from "@aexhq/brain-runtime";
import type { MessageUserRecord } from "@aexhq/brain-protocol";
import { Brain, ProtocolError, SdkError, tool } from "../src/index.ts";
import { deferred, records, scripted, sleep } from "./helpers/brain.mts";

type Runtime = Awaited<ReturnType<typeof startBrain>>;

/**
 * A runtime (startBrain's options) that records the Idempotency-Key of every POST …/messages it
 * receives (undefined: none), through a route an Environment plugin adds and that passes every
 * request on.
 */
async function countingRuntime(opts: Parameters<typeof startBrain>[0]): Promise<{ runtime: Runtime; keys: Array<string | undefined> }> {
  const keys: Array<string | undefined> = [];
  const counter: EnvironmentPlugin = {
    name: "message-counter",
    install: (ctx) =>
      ctx.route((req: IncomingMessage, _res, url) => {
        if (req.method === "POST" && url.pathname.endsWith("/messages")) keys.push(req.headers["idempotency-key"] as string | undefined);
        return false;
      }),
  };
  const runtime = await startBrain({ ...opts, environments: [...defaultEnvironments(), counter] });
  return { runtime, keys };
}

const messagesOf = async (session: Parameters<typeof records>[0]) => (await records(session)).filter((r): r is MessageUserRecord => r.type === "message.user");
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test("send() outlasts the runtime's wait bound: it asks again with the same key, and the turn runs once", async () => {
  const { runtime, keys } = await countingRuntime({ dataDir: ":memory:", port: 0, maxWaitMs: 200 });
  const brain = new Brain({ url: runtime.url, token: runtime.token });
  try {
    const nap = tool({ name: "nap", description: "d", input: z.object({}), run: async () => { await sleep(900); return "rested"; } });
    const session = await brain.sessions.create({ model: scripted({ toolCalls: [{ name: "nap", input: {} }] }, { text: "awake" }, { text: "a second turn" }), tools: [nap()] });
    assert.is(await session.send("sleep on it"), "awake");
    assert.ok(keys.length >= 3, `asked again after each 202 (${keys.length} requests)`);
    assert.ok(UUID.test(keys[0]!), `a random UUID: ${keys[0]}`);
    assert.ok(keys.every((k) => k === keys[0]), `one key for every request: ${JSON.stringify(keys)}`);
    const messages = await messagesOf(session);
    assert.equal(messages.map((m) => [m.data.text, m.data.idempotencyKey]), [["sleep on it", keys[0]]]);
    // The next send() is another message: another key.
    assert.is(await session.send("again"), "a second turn");
    assert.is(new Set(keys).size, 2);
  } finally {
    await brain.close();
    await runtime.close();
  }
});

test("send() rides out a runtime restart: it retries with the same key (connection refused, then 503), and rejects `interrupted` for the turn the restart cut short; one message.user", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "brain-send-"));
  const token = "send-test-operator-token";
  let { runtime, keys: before } = await countingRuntime({ dataDir, port: 0, token });
  const port = Number(new URL(runtime.url).port);
  const brain = new Brain({ url: runtime.url, token });
  try {
    const running = deferred();
    const hang = tool({ name: "hang", description: "d", input: z.object({}), run: async () => { running.resolve(); await new Promise(() => {}); } });
    const session = await brain.sessions.create({ model: scripted({ toolCalls: [{ name: "hang", input: {} }] }, { text: "never" }), tools: [hang()] });
    const sent = session.send("go").then(() => undefined, (e: unknown) => e);
    await running.promise;
    await runtime.close();
    // Down for a moment: the SDK's requests meanwhile are refused (connection_failed) and retried.
    await sleep(300);
    const restarted = await countingRuntime({ dataDir, port, token });
    runtime = restarted.runtime;
    const after = restarted.keys;
    const e = await sent;
    assert.instance(e, ProtocolError);
    assert.equal([(e as ProtocolError).code, (e as ProtocolError).retryable], ["interrupted", true]);
    assert.is(before.length, 1);
    assert.ok(after.length >= 1, "sent again to the restarted runtime");
    assert.ok(after.every((k) => k === before[0]), `the same key: ${JSON.stringify([before, after])}`);
    const messages = await messagesOf(session);
    assert.equal(messages.map((m) => m.data.idempotencyKey), [before[0]], "one message.user");
  } finally {
    await brain.close();
    await runtime.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("send(text, { idempotencyKey }) uses the caller's key (twice is one turn), refuses a bad one locally, and gives up after retryForMs", async () => {
  const { runtime, keys } = await countingRuntime({ dataDir: ":memory:", port: 0 });
  const brain = new Brain({ url: runtime.url, token: runtime.token });
  let closed = false;
  try {
    const session = await brain.sessions.create({ model: scripted({ text: "one answer" }, { text: "a second turn" }), tools: [] });
    assert.is(await session.send("hi", { idempotencyKey: "order-42" }), "one answer");
    assert.is(await session.send("hi", { idempotencyKey: "order-42" }), "one answer", "answered from the first");
    assert.equal((await messagesOf(session)).length, 1);
    const other = await session.send("hello", { idempotencyKey: "order-42" }).then(() => undefined, (e: unknown) => e);
    assert.instance(other, ProtocolError);
    assert.equal([(other as ProtocolError).code, (other as ProtocolError).status], ["invalid_request", 400], "a key names one message");
    for (const bad of ["", "with space", "x".repeat(256), "naïve"]) {
      const e = await session.send("hi", { idempotencyKey: bad }).then(() => undefined, (e: unknown) => e);
      assert.instance(e, TypeError, JSON.stringify(bad));
    }
    assert.equal(keys, ["order-42", "order-42", "order-42"], "nothing sent for the bad keys");
    await runtime.close();
    closed = true;
    const t0 = performance.now();
    const down = await session.send("anyone?", { retryForMs: 500 }).then(() => undefined, (e: unknown) => e);
    const took = performance.now() - t0;
    assert.instance(down, SdkError);
    assert.is((down as SdkError).code, "connection_failed");
    assert.ok(took >= 250 && took < 3000, `retried for about retryForMs (${Math.round(took)} ms)`);
  } finally {
    await brain.close();
    if (!closed) await runtime.close();
  }
});

test("a send() in flight when the server stops rejects connection_lost saying the connection was lost, not that Brain could not be reached", async () => {
  const { runtime } = await countingRuntime({ dataDir: ":memory:", port: 0 });
  const brain = new Brain({ url: runtime.url, token: runtime.token });
  try {
    const running = deferred();
    const hang = tool({ name: "hang", description: "d", input: z.object({}), run: async () => { running.resolve(); await new Promise(() => {}); } });
    const session = await brain.sessions.create({ model: scripted({ toolCalls: [{ name: "hang", input: {} }] }, { text: "never" }), tools: [hang()] });
    const sent = session.send("go", { retryForMs: 400 }).then(() => undefined, (e: unknown) => e);
    await running.promise;
    await runtime.close();
    const e = await sent;
    assert.instance(e, SdkError);
    assert.is((e as SdkError).code, "connection_lost");
    assert.match((e as SdkError).message, /^send\(\): the connection to Brain was lost while the message's turn ran/);
    assert.match((e as SdkError).message, /idempotencyKey/);
  } finally {
    await brain.close();
  }
});

test.run();
