import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { tool, Brain } from "../src/index.ts";
import { memoryRuntime, callThenAnswer, records, ofCall, deferred, sendDirect, waitConnected, scripted, sleep } from "./helpers/brain.mts";
import { TcpProxy } from "./helpers/proxy.mts";

async function setup() {
  const runtime = await memoryRuntime();
  const proxy = new TcpProxy(runtime.url);
  const url = await proxy.start();
  const host = { id: `test-host-${Math.random().toString(36).slice(2)}`, secret: "a-secret-of-sufficient-length" };
  const brain = new Brain({ url, token: runtime.token, host });
  const cleanup = async () => { await brain.close(); await proxy.close(); await runtime.close(); };
  return { runtime, proxy, brain, host, cleanup };
}

test("8. several sessions and tools on one Brain share one connection; deleting a session releases its handlers", async () => {
  const { proxy, brain, cleanup } = await setup();
  try {
    const a = tool({ name: "a", description: "d", input: z.object({}), run: async (_i, ctx) => ctx.finish("a") });
    const b = tool({ name: "b", description: "d", input: z.object({}), options: z.object({ n: z.number() }), run: async (_i, ctx) => ctx.finish(ctx.options.n) });
    const c = tool({ name: "c", description: "d", input: z.object({}), run: async (_i, ctx) => ctx.finish("c") });
    // Created concurrently: the second registration must not be lost behind the first.
    const [s1, s2] = await Promise.all([
      brain.sessions.create({ model: callThenAnswer([{ name: "a", input: {} }, { name: "b", input: {} }]), tools: [a(), b({ n: 1 })] }),
      brain.sessions.create({ model: callThenAnswer([{ name: "b", input: {} }, { name: "c", input: {} }]), tools: [b({ n: 2 }), c()] }),
    ]);
    const s3 = await brain.sessions.create({ model: callThenAnswer([{ name: "a", input: {} }]), tools: [a()] });
    await Promise.all([s1.send("1"), s2.send("2"), s3.send("3")]);
    const values = async (s: typeof s1) => (await records(s)).flatMap((r) => (r.type === "tool.result" ? [(r.data.outcome as { value: unknown }).value] : []));
    assert.equal(await values(s1), ["a", 1]);
    assert.equal(await values(s2), [2, "c"], "each session keeps its own options");
    assert.equal(await values(s3), ["a"]);
    assert.is(proxy.upgrades, 1, "one WebSocket upgrade for three sessions");
    assert.is(brain.connectionCount, 1);
    assert.equal(brain.hostedSessions.sort(), [s1.id, s2.id, s3.id].sort());

    // Deleting a session with an open call cancels it and releases the session's handlers.
    const held = deferred<AbortSignal>();
    const hang = tool({ name: "hang", description: "d", input: z.object({}), run: async (_i, ctx) => { held.resolve(ctx.signal); await new Promise(() => {}); } });
    const s4 = await brain.sessions.create({ model: callThenAnswer([{ name: "hang", input: {} }]), tools: [hang()] });
    void s4.send("go").catch(() => undefined);
    const signal = await held.promise;
    await s4.delete();
    assert.not.ok(brain.hostedSessions.includes(s4.id), "handlers released");
    await s2.delete();
    assert.equal(brain.hostedSessions.sort(), [s1.id, s3.id].sort());
    // Up to 5 s: the abort follows the runtime's cancel, which a loaded machine may deliver late.
    for (let i = 0; i < 250 && !signal.aborted; i++) await sleep(20);
    assert.ok(signal.aborted, "the open call of the deleted session was aborted");
    assert.is(proxy.upgrades, 1);
  } finally {
    await cleanup();
  }
});

test("9. connection loss: ctx.signal aborts, the call becomes unknown, the SDK reconnects as the same host, later calls work, nothing is replayed", async () => {
  const { runtime, proxy, brain, host, cleanup } = await setup();
  try {
    let hangRuns = 0;
    const started = deferred<void>();
    const aborted = deferred<unknown>();
    const hang = tool({
      name: "hang", description: "d", input: z.object({}),
      run: async (_i, ctx) => {
        hangRuns++;
        ctx.signal.addEventListener("abort", () => aborted.resolve(ctx.signal.reason));
        started.resolve();
        await new Promise(() => {});
      },
    });
    const quick = tool({ name: "quick", description: "d", input: z.object({}), run: async (_i, ctx) => ctx.finish("after reconnect") });
    const session = await brain.sessions.create({
      model: scripted({ toolCalls: [{ name: "hang", input: {} }] }, { text: "lost" }, { toolCalls: [{ name: "quick", input: {} }] }, { text: "worked" }),
      tools: [hang(), quick()],
    });
    // The message goes straight to the runtime so dropping the proxy cuts only the host connection.
    const first = sendDirect(runtime, session.id, "first");
    await started.promise;
    proxy.drop();
    assert.is(((await aborted.promise) as { code?: string }).code, "connection_lost");
    assert.is((await first).text, "lost");
    const all = await records(session);
    const hangId = all.find((r) => r.type === "tool.call_started")!.data as { callId: string };
    assert.is((ofCall(all, hangId.callId).at(-1) as any).data.status, "unknown");

    await waitConnected(runtime, host.id);
    assert.is(proxy.upgrades, 2, "reconnected once");
    const second = await sendDirect(runtime, session.id, "second");
    assert.is(second.text, "worked");
    const after = await records(session);
    const quickStarted = after.filter((r) => r.type === "tool.call_started").at(-1)!.data as { callId: string };
    assert.equal((ofCall(after, quickStarted.callId).find((r) => r.type === "tool.result") as any).data.outcome, { status: "ok", value: "after reconnect" });
    assert.is(hangRuns, 1, "the disconnected invoke was not replayed");
    assert.is(after.filter((r) => r.type === "tool.call_started").length, 2);
  } finally {
    await cleanup();
  }
});

test.run();
