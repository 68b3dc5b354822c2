import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { tool, type Session } from "../src/index.ts";
import { withBrain, runStep, ofCall, records, deferred } from "./helpers/brain.mts";

test("5. await ctx.emit resolves with a sequence already in the journal, ordered before the result", async () => {
  await withBrain(async (brain) => {
    let session: Session | undefined;
    const checks: { sequence: number; inJournal: boolean }[] = [];
    const t = tool({
      name: "t", description: "d", input: z.object({}),
      run: async (_i, ctx) => {
        const sequence = await ctx.emit("import_started", { source: "a" });
        const now = await records(await brain.sessions.get(ctx.sessionId));
        checks.push({ sequence, inJournal: now.some((r) => r.sequence === sequence && r.type === "tool.event") });
        return ctx.finish({ eventSequence: sequence });
      },
    });
    const out = await runStep(brain, [t()], [{ name: "t", input: {} }]);
    session = out.session;
    assert.is(checks.length, 1);
    assert.ok(checks[0]!.inJournal, "the emitted event was committed when emit resolved");
    const call = ofCall(out.all, out.ids[0]!) as any[];
    const event = call.find((r) => r.type === "tool.event");
    const result = call.find((r) => r.type === "tool.result");
    assert.is(event.sequence, checks[0]!.sequence);
    assert.equal(event.data, { callId: out.ids[0], kind: "import_started", data: { source: "a" } });
    assert.ok(event.sequence < result.sequence);
    assert.equal(result.data.outcome.value, { eventSequence: checks[0]!.sequence });
    assert.ok(session);
  });
});

test("5. emissions after finish are rejected; finish waits for earlier emissions", async () => {
  await withBrain(async (brain) => {
    const errors: string[] = [];
    let emitted: Promise<number> | undefined;
    // The late attempts run after the finish's answer (on the host's socket), which may come after the
    // turn's end (on another): the test waits for them rather than reading errors at once.
    const tried = deferred();
    const t = tool({
      name: "t", description: "d", input: z.object({}),
      run: async (_i, ctx) => {
        emitted = ctx.emit("progress", { step: 1 }); // not awaited: finish must still come after it
        await ctx.finish({ done: true });
        for (const late of [() => ctx.emit("late", {}), () => ctx.emitResult(1), () => ctx.finish(2)]) {
          await late().then(() => errors.push("accepted"), (e) => errors.push(e.code));
        }
        tried.resolve();
      },
    });
    const { all, ids } = await runStep(brain, [t()], [{ name: "t", input: {} }]);
    const call = ofCall(all, ids[0]!) as any[];
    const event = call.find((r) => r.type === "tool.event");
    const finished = call.find((r) => r.type === "tool.finished");
    assert.is(await emitted, event.sequence);
    assert.ok(event.sequence < finished.sequence, "finish committed after the earlier emission");
    await tried.promise;
    assert.equal(errors, ["call_finished", "call_finished", "call_finished"]);
    assert.is(call.filter((r) => r.type === "tool.event").length, 1);
  });
});

test.run();
