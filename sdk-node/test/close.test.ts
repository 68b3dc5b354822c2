// brain.close() with calls still open (issue 30, point 2): it ends them `cancelled` (an explicit
// cancellation, not the `unknown` of a lost host), at once or after `waitMs` in which they may
// finish by themselves; a tool's later ctx calls reject `call_finished` and are never an unhandled
// rejection. A real runtime on loopback.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { Brain, tool, SdkError, type ToolContext } from "../src/index.ts";
import { memoryRuntime, scripted, records, deferred, sleep, finished } from "./helpers/brain.mts";

/** Collects the process's unhandled rejections while `body` runs (and a moment after). */
async function unhandledDuring(body: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const listener = (reason: unknown) => void seen.push(reason);
  process.on("unhandledRejection", listener);
  try {
    await body();
    await sleep(50);
  } finally {
    process.off("unhandledRejection", listener);
  }
  return seen;
}

function holdingTool(held: ReturnType<typeof deferred<ToolContext>>) {
  return tool({ name: "crunch", description: "d", input: z.object({}), run: async (_i, ctx) => void held.resolve(ctx as ToolContext) });
}

test("close() ends a background call `cancelled`, the tool's signal aborts, and its later emit/finish reject call_finished without an unhandled rejection", async () => {
  const runtime = await memoryRuntime();
  try {
    const brain = new Brain({ url: runtime.url, token: runtime.token });
    const held = deferred<ToolContext>();
    const session = await brain.sessions.create({ model: scripted({ toolCalls: [{ name: "crunch", input: {} }] }, { text: "started" }, { text: "woken" }), tools: [holdingTool(held)()] });
    assert.is(await session.send("go"), "started");
    const ctx = await held.promise;
    const unhandled = await unhandledDuring(async () => {
      await brain.close();
      assert.ok(ctx.signal.aborted, "the tool's signal aborted");
      assert.is((ctx.signal.reason as SdkError).code, "cancelled");
      // Fire and forget, as background work does: must not crash the process.
      void ctx.emit("progress", { done: 1 });
      void ctx.finish();
      const e = await ctx.emit("progress", { done: 2 }).then(() => undefined, (e: unknown) => e);
      assert.instance(e, SdkError);
      assert.is((e as SdkError).code, "call_finished");
      assert.match((e as SdkError).message, /emit: the call is over: the Brain client was closed \(brain\.close\(\)\)/);
      const f = await ctx.finish().then(() => undefined, (e: unknown) => e);
      assert.is((f as SdkError).code, "call_finished");
    });
    assert.equal(unhandled, []);
    const viewer = new Brain({ url: runtime.url, token: runtime.token });
    try {
      const handle = await viewer.sessions.get(session.id);
      const fin = finished(await records(handle));
      assert.equal(fin.map((r) => [r.data.status, r.data.message]), [["cancelled", "the Brain client was closed (brain.close()) before the call finished"]]);
    } finally {
      await viewer.close();
    }
  } finally {
    await runtime.close();
  }
});

test("close({ waitMs }) lets a call finish by itself within the bound; one that outlasts it ends cancelled when the bound passes", async () => {
  const runtime = await memoryRuntime();
  try {
    const quick = tool({ name: "quick", description: "d", input: z.object({}), run: async (_i, ctx) => void setTimeout(() => void ctx.finish("done in time"), 150) });
    const slow = tool({ name: "slow", description: "d", input: z.object({}), run: async (_i, ctx) => void setTimeout(() => void ctx.finish("too late"), 5000) });
    const brain = new Brain({ url: runtime.url, token: runtime.token });
    const session = await brain.sessions.create({
      model: scripted({ toolCalls: [{ name: "quick", input: {} }, { name: "slow", input: {} }] }, { text: "started" }, { text: "w1" }, { text: "w2" }, { text: "w3" }),
      tools: [quick(), slow()],
    });
    assert.is(await session.send("go"), "started");
    const t0 = performance.now();
    await brain.close({ waitMs: 600 });
    const took = performance.now() - t0;
    assert.ok(took >= 550 && took < 3000, `waited for the bound (${Math.round(took)} ms)`);
    const viewer = new Brain({ url: runtime.url, token: runtime.token });
    try {
      const all = await records(await viewer.sessions.get(session.id));
      const tools = new Map(all.flatMap((r) => (r.type === "tool.call_started" ? [[r.data.callId, r.data.tool] as const] : [])));
      const ends = finished(all).map((r) => [tools.get(r.data.callId), r.data.status]);
      assert.equal(ends.sort(), [["quick", "ok"], ["slow", "cancelled"]]);
    } finally {
      await viewer.close();
    }
  } finally {
    await runtime.close();
  }
});

test("close({ waitMs }) returns as soon as the calls are done; a bad waitMs is a TypeError; close() twice is one close", async () => {
  const runtime = await memoryRuntime();
  try {
    const quick = tool({ name: "quick", description: "d", input: z.object({}), run: async (_i, ctx) => void setTimeout(() => void ctx.finish("ok"), 100) });
    const brain = new Brain({ url: runtime.url, token: runtime.token });
    const session = await brain.sessions.create({ model: scripted({ toolCalls: [{ name: "quick", input: {} }] }, { text: "started" }, { text: "woken" }), tools: [quick()] });
    assert.is(await session.send("go"), "started");
    for (const bad of [-1, Number.NaN, Infinity, "5" as unknown as number]) {
      await brain.close({ waitMs: bad }).then(() => assert.unreachable(`waitMs ${String(bad)}`), (e: unknown) => assert.instance(e, TypeError));
    }
    const t0 = performance.now();
    await Promise.all([brain.close({ waitMs: 10_000 }), brain.close()]);
    assert.ok(performance.now() - t0 < 3000, "did not wait for the whole bound");
    const viewer = new Brain({ url: runtime.url, token: runtime.token });
    try {
      assert.equal(finished(await records(await viewer.sessions.get(session.id))).map((r) => r.data.status), ["ok"]);
    } finally {
      await viewer.close();
    }
  } finally {
    await runtime.close();
  }
});

test.run();
