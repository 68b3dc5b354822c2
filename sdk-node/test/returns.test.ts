import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { tool, type ToolContext } from "../src/index.ts";
import { withBrain, runStep, ofCall, waitFor, deferred } from "./helpers/brain.mts";

const types = (rs: { type: string }[]) => rs.map((r) => r.type).filter((t) => t.startsWith("tool."));

test("2. return ctx.finish(value) publishes one result and finishes", async () => {
  await withBrain(async (brain) => {
    const t = tool({ name: "t", description: "d", input: z.object({}), run: async (_i, ctx) => ctx.finish({ n: 1 }) });
    const { all, ids } = await runStep(brain, [t()], [{ name: "t", input: {} }]);
    const call = ofCall(all, ids[0]!);
    assert.equal(types(call), ["tool.call_started", "tool.result", "tool.finished"]);
    assert.equal((call[1] as any).data.outcome, { status: "ok", value: { n: 1 } });
    assert.is((call[2] as any).data.status, "ok");
  });
});

test("2. return value publishes one result and the call stays open until finish", async () => {
  await withBrain(async (brain) => {
    const held = deferred<ToolContext>();
    const t = tool({ name: "t", description: "d", input: z.object({}), run: async (_i, ctx) => { held.resolve(ctx as ToolContext); return { n: 2 }; } });
    const { session, all, ids, answer } = await runStep(brain, [t()], [{ name: "t", input: {} }]);
    assert.is(answer, "done");
    assert.equal(types(ofCall(all, ids[0]!)), ["tool.call_started", "tool.result", "tool.returned"]);
    assert.equal((await session.info()).openCalls, [ids[0]]);
    await (await held.promise).finish();
    const after = await waitFor(session, (r) => r.type === "tool.finished");
    assert.equal(types(ofCall(after, ids[0]!)), ["tool.call_started", "tool.result", "tool.returned", "tool.finished"]);
  });
});

test("2. returning nothing publishes no result", async () => {
  await withBrain(async (brain) => {
    const t = tool({ name: "t", description: "d", input: z.object({}), run: async () => {} });
    const { all, ids } = await runStep(brain, [t()], [{ name: "t", input: {} }]);
    assert.equal(types(ofCall(all, ids[0]!)), ["tool.call_started", "tool.returned"]);
  });
});

test("2. await ctx.finish(); return; finishes without a result", async () => {
  await withBrain(async (brain) => {
    const t = tool({ name: "t", description: "d", input: z.object({}), run: async (_i, ctx) => { await ctx.finish(); return; } });
    const { all, ids } = await runStep(brain, [t()], [{ name: "t", input: {} }]);
    const call = ofCall(all, ids[0]!);
    assert.equal(types(call), ["tool.call_started", "tool.finished"]);
    assert.is((call[1] as any).data.status, "ok");
  });
});

test("2. emitResult several times then finish", async () => {
  await withBrain(async (brain) => {
    const t = tool({
      name: "t", description: "d", input: z.object({}), output: z.number(),
      run: async (_i, ctx) => {
        const seqs = [await ctx.emitResult(1), await ctx.emitResult(2), await ctx.emitResult(3)];
        if (!(seqs[0]! < seqs[1]! && seqs[1]! < seqs[2]!)) throw new Error("sequences not increasing");
        return ctx.finish();
      },
    });
    const { all, ids } = await runStep(brain, [t()], [{ name: "t", input: {} }]);
    const call = ofCall(all, ids[0]!);
    assert.equal(types(call), ["tool.call_started", "tool.result", "tool.result", "tool.result", "tool.finished"]);
    assert.equal(call.slice(1, 4).map((r: any) => r.data.outcome.value), [1, 2, 3]);
    assert.is((call[4] as any).data.status, "ok");
  });
});

test("2. content is kept beside structured output and never changes status", async () => {
  await withBrain(async (brain) => {
    const t = tool({
      name: "t", description: "d", input: z.object({ fail: z.boolean() }), output: z.object({ rows: z.number() }),
      run: async ({ fail }, ctx) => fail
        ? ctx.finish({ status: "error", error: { code: "upstream", message: "down" } }, { content: "all good, really" })
        : ctx.finish({ rows: 3 }, { content: "Three rows." }),
    });
    const { all, ids } = await runStep(brain, [t()], [{ name: "t", input: { fail: false } }, { name: "t", input: { fail: true } }]);
    const ok = ofCall(all, ids[0]!) as any[];
    assert.equal(ok[1].data, { callId: ids[0], outcome: { status: "ok", value: { rows: 3 } }, content: "Three rows." });
    assert.is(ok[2].data.status, "ok");
    const bad = ofCall(all, ids[1]!) as any[];
    assert.is(bad[1].data.outcome.status, "error");
    assert.is(bad[1].data.content, "all good, really");
    assert.is(bad.at(-1).data.status, "error");
  });
});

test("2. content does not bypass output validation", async () => {
  await withBrain(async (brain) => {
    const t = tool({ name: "t", description: "d", input: z.object({}), output: z.number(), run: async (_i, ctx) => ctx.finish("nope" as never, { content: "42" }) });
    const { all, ids } = await runStep(brain, [t()], [{ name: "t", input: {} }]);
    const call = ofCall(all, ids[0]!) as any[];
    assert.is(call.at(-1).data.status, "error");
    assert.is(call.at(-1).data.error.code, "invalid_output");
  });
});

test.run();
