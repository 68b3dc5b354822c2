// Tenant limits (issue 32) as the SDK surfaces them: a key over one of its limits gets a typed
// LimitExceededError (a ProtocolError with code `limit_exceeded`) saying which limit, its value,
// the key's use and when to retry: from an HTTP 429 (sessions.create) and from a `rejected` answer
// to ctx.emit (a session at its journal-bytes limit). Real runtime, real HTTP and WebSocket.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { Brain, LimitExceededError, ProtocolError, tool } from "../src/index.ts";
import { memoryRuntime, callThenAnswer, scripted } from "./helpers/brain.mts";
import type { Runtime } from "./helpers/brain.mts";

async function newKey(runtime: Runtime, name: string, limits: Record<string, number>): Promise<string> {
  const headers = { authorization: `Bearer ${runtime.token}`, "content-type": "application/json" };
  const res = await fetch(`${runtime.url}/v1/keys`, { method: "POST", headers, body: JSON.stringify({ name }) });
  const created = (await res.json()) as { id: string; key: string };
  const patched = await fetch(`${runtime.url}/v1/keys/${created.id}`, { method: "PATCH", headers, body: JSON.stringify({ limits }) });
  assert.is(patched.status, 200);
  return created.key;
}

test("sessions.create over the key's sessions limit rejects with a LimitExceededError; another key creates meanwhile", async () => {
  const runtime = await memoryRuntime();
  const app = new Brain({ url: runtime.url, token: await newKey(runtime, "app", { sessions: 1 }) });
  const other = new Brain({ url: runtime.url, token: await newKey(runtime, "other", { sessions: 1 }) });
  try {
    await app.sessions.create({ model: scripted({ text: "hi" }), tools: [] });
    const error = await app.sessions.create({ model: scripted({ text: "hi" }), tools: [] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof LimitExceededError, String(error));
    assert.ok(error instanceof ProtocolError, "a LimitExceededError is a ProtocolError");
    assert.is(error.code, "limit_exceeded");
    assert.is(error.status, 429);
    assert.is(error.limit, "sessions");
    assert.is(error.max, 1);
    assert.is(error.current, 1);
    assert.is(error.retryAfterMs, 1000, "from Retry-After");
    assert.is(error.retryable, true);
    await other.sessions.create({ model: scripted({ text: "hi" }), tools: [] });
  } finally {
    await app.close();
    await other.close();
    await runtime.close();
  }
});

test("ctx.emit in a session at its journal-bytes limit rejects with a LimitExceededError; the tool still finishes", async () => {
  const runtime = await memoryRuntime();
  const app = new Brain({ url: runtime.url, token: await newKey(runtime, "app", { journalBytes: 2000 }) });
  const seen: unknown[] = [];
  const chatty = tool({
    name: "chatty",
    description: "Emits until refused.",
    input: z.object({}),
    output: z.object({ refusedAfter: z.number() }),
    run: async (_input, ctx) => {
      let n = 0;
      for (; n < 20; n++) {
        try {
          await ctx.emit("progress", { chunk: "x".repeat(500) });
        } catch (e) {
          seen.push(e);
          break;
        }
      }
      return ctx.finish({ refusedAfter: n });
    },
  });
  try {
    const session = await app.sessions.create({ model: callThenAnswer([{ name: "chatty", input: {} }], "done"), tools: [chatty({})] });
    assert.is(await session.send("go"), "done");
    const error = seen[0];
    assert.ok(error instanceof LimitExceededError, String(error));
    assert.is(error.limit, "journalBytes");
    assert.is(error.max, 2000);
    assert.ok(error.current >= 2000);
  } finally {
    await app.close();
    await runtime.close();
  }
});

test.run();
