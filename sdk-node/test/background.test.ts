import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { tool, type ToolContext } from "../src/index.ts";
import { withBrain, runStep, ofCall, deferred, waitFor } from "./helpers/brain.mts";

test("7. a tool that forgets to finish stays open until its deadline", async () => {
  await withBrain(async (brain) => {
    const t = tool({ name: "t", description: "d", input: z.object({}), run: async () => ({ partial: true }) });
    const { session, ids, all, answer } = await runStep(brain, [t()], [{ name: "t", input: {}, deadlineMs: 300 }]);
    assert.is(answer, "done", "the turn completed with the call open");
    assert.not.ok(ofCall(all, ids[0]!).some((r) => r.type === "tool.finished"));
    const later = await waitFor(session, (r) => r.type === "tool.finished");
    assert.is((ofCall(later, ids[0]!).at(-1) as any).data.status, "timeout");
  });
});

test("7. with no deadline it stays open, the turn completes, and a later ctx.finish from the background wakes the loop", async () => {
  await withBrain(async (brain) => {
    const held = deferred<ToolContext>();
    const t = tool({ name: "t", description: "d", input: z.object({}), run: async (_i, ctx) => { held.resolve(ctx as ToolContext); } });
    const { session, ids, answer } = await runStep(brain, [t()], [{ name: "t", input: {} }]);
    assert.is(answer, "done");
    await new Promise((r) => setTimeout(r, 150));
    assert.equal((await session.info()).openCalls, [ids[0]], "still open");
    await (await held.promise).finish({ report: "ready" });
    const all = await waitFor(session, (r) => r.type === "turn.completed" && r.data.text.includes("wake"));
    const wake = all.find((r) => r.type === "turn.started" && r.data.cause === "wake");
    const fin = ofCall(all, ids[0]!).find((r) => r.type === "tool.finished")!;
    assert.ok(wake && wake.sequence > fin.sequence, "a wake turn started after the background finish");
    assert.equal((await session.info()).openCalls, []);
  });
});

test.run();
