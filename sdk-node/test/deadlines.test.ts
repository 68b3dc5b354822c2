import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { tool, Brain } from "../src/index.ts";
import { withBrain, runStep, ofCall, deferred, callThenAnswer, records, memoryRuntime, sleep } from "./helpers/brain.mts";
import { TcpProxy } from "./helpers/proxy.mts";

const finishedOf = (all: any[], id: string) => ofCall(all, id).find((r) => r.type === "tool.finished") as any;

/**
 * The deadline of a call whose tool must run: an invoke that reaches the SDK after its deadline never
 * runs the tool (tested below), so a deadline of ~100 ms left a test waiting forever for the tool
 * on a loaded machine. The tools that outlast it wait from ctx.deadline, not a fixed time.
 */
const DELIVERED_MS = 1000;

test("6. a past deadline ends the call timeout and aborts ctx.signal", async () => {
  await withBrain(async (brain) => {
    const aborted = deferred<unknown>();
    const t = tool({
      name: "slow", description: "d", input: z.object({}),
      run: async (_i, ctx) => {
        if (ctx.deadline === undefined || ctx.deadline <= Date.now()) throw new Error("expected a future deadline");
        ctx.signal.addEventListener("abort", () => aborted.resolve(ctx.signal.reason));
        await new Promise(() => {}); // never finishes by itself
      },
    });
    // Long enough for the invoke to reach the SDK before it (else the tool never runs and nothing aborts).
    const { all, ids } = await runStep(brain, [t()], [{ name: "slow", input: {}, deadlineMs: DELIVERED_MS }]);
    assert.is(finishedOf(all, ids[0]!).data.status, "timeout");
    const reason = await aborted.promise;
    assert.is((reason as { code?: string }).code, "timeout");
  });
});

test("6. ctx.signal first read after the deadline is already aborted with the timeout reason", async () => {
  await withBrain(async (brain) => {
    const seen = deferred<{ aborted: boolean; code?: string }>();
    const t = tool({
      name: "late_reader", description: "d", input: z.object({}),
      run: async (_i, ctx) => {
        await sleep(ctx.deadline! - Date.now() + 300); // the deadline passes before the tool ever looks at its signal
        seen.resolve({ aborted: ctx.signal.aborted, code: (ctx.signal.reason as { code?: string } | undefined)?.code });
      },
    });
    const { all, ids } = await runStep(brain, [t()], [{ name: "late_reader", input: {}, deadlineMs: DELIVERED_MS }]);
    assert.is(finishedOf(all, ids[0]!).data.status, "timeout");
    assert.equal(await seen.promise, { aborted: true, code: "timeout" });
  });
});

test("6. an already expired call never runs validation or user code", async () => {
  const runtime = await memoryRuntime();
  const proxy = new TcpProxy(runtime.url);
  const brain = new Brain({ url: await proxy.start(), token: runtime.token });
  try {
    let validated = 0;
    let ran = 0;
    const t = tool({ name: "t", description: "d", input: z.object({}).refine(() => { validated++; return true; }), run: async (_i, ctx) => { ran++; return ctx.finish(1); } });
    const session = await brain.sessions.create({ model: callThenAnswer([{ name: "t", input: {}, deadlineMs: 20 }]), tools: [t()] });
    // Everything the runtime sends now arrives 200 ms late, so the invoke is already past its deadline.
    proxy.downstreamDelayMs = 200;
    const res = await fetch(`${runtime.url}/v1/sessions/${session.id}/messages`, { method: "POST", headers: { authorization: `Bearer ${runtime.token}`, "content-type": "application/json" }, body: JSON.stringify({ text: "go", wait: true }) });
    assert.is(res.status, 200);
    await sleep(400); // let the delayed invoke reach the SDK and be handled
    const all = await records(session);
    const id = all.find((r) => r.type === "tool.call_started")!.data as { callId: string };
    assert.is(finishedOf(all, id.callId).data.status, "timeout");
    assert.is(validated, 0, "no validation");
    assert.is(ran, 0, "no user code");
  } finally {
    await brain.close();
    await proxy.close();
    await runtime.close();
  }
});

test("6. async validation consumes the deadline", async () => {
  await withBrain(async (brain) => {
    let ran = 0;
    const t = tool({
      name: "t", description: "d",
      input: z.object({}).refine(async () => { await sleep(400); return true; }),
      run: async (_i, ctx) => { ran++; return ctx.finish(1); },
    });
    const { all, ids } = await runStep(brain, [t()], [{ name: "t", input: {}, deadlineMs: 100 }]);
    assert.is(finishedOf(all, ids[0]!).data.status, "timeout");
    await sleep(400);
    assert.is(ran, 0);
    assert.is(ofCall(await records((await brain.sessions.get(all[0]!.sessionId))), ids[0]!).length, 2, "no late result after the timeout");
  });
});

test("6. explicit cancellation → cancelled, ctx.signal aborted", async () => {
  await withBrain(async (brain) => {
    const started = deferred<string>();
    const aborted = deferred<unknown>();
    const t = tool({
      name: "t", description: "d", input: z.object({}),
      run: async (_i, ctx) => {
        ctx.signal.addEventListener("abort", () => aborted.resolve(ctx.signal.reason));
        started.resolve(`${ctx.sessionId}:${ctx.sequence}`);
        await new Promise(() => {});
      },
    });
    const session = await brain.sessions.create({ model: callThenAnswer([{ name: "t", input: {} }]), tools: [t()] });
    const answer = session.send("go");
    const callId = await started.promise;
    assert.equal(await session.cancel({ callId }), [callId]);
    assert.is(await answer, "done");
    const all = await records(session);
    assert.is(finishedOf(all, callId).data.status, "cancelled");
    assert.is(((await aborted.promise) as { code?: string }).code, "cancelled");
  });
});

test("6. the first terminal cause is kept even if the function finishes later", async () => {
  await withBrain(async (brain) => {
    const late = deferred<string>();
    const t = tool({
      name: "t", description: "d", input: z.object({}),
      run: async (_i, ctx) => {
        await sleep(ctx.deadline! - Date.now() + 300); // ignores ctx.signal, finishes after the deadline
        await ctx.finish("late").then(() => late.resolve("accepted"), (e) => late.resolve(e.code));
      },
    });
    const { session, ids } = await runStep(brain, [t()], [{ name: "t", input: {}, deadlineMs: DELIVERED_MS }]);
    assert.is(await late.promise, "call_finished"); // one code for "the call is over", whatever ended it
    const call = ofCall(await records(session), ids[0]!) as any[];
    assert.equal(call.map((r) => r.type), ["tool.call_started", "tool.finished"]);
    assert.is(call[1].data.status, "timeout");
  });
});

test.run();
