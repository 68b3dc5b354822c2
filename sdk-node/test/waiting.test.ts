// Waiting on a session (issue 30, point 1): session.idle(), session.next(), iterating a session's
// answers (wake turns included), and send(text, { failOnToolError }). A real runtime on loopback.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { tool, SdkError, type ToolContext, type TurnAnswer } from "../src/index.ts";
import { withBrain, scripted, deferred, sleep } from "./helpers/brain.mts";

/** A tool that returns at once and finishes in the background `ms` later (a wake follows). */
function background(ms: number) {
  return tool({
    name: "crunch", description: "Crunches in the background.", input: z.object({}), output: z.object({ sum: z.number() }),
    run: async (_i, ctx) => {
      setTimeout(() => void ctx.finish({ sum: 42 }), ms);
    },
  });
}

const brief = (a: TurnAnswer) => [a.cause, a.status, a.text ?? a.error?.code];

test("idle() waits for a background tool and the wake turn it causes, and resolves with every answer since the handle began: the send's, then the wake's", async () => {
  await withBrain(async (brain) => {
    const session = await brain.sessions.create({ model: scripted({ toolCalls: [{ name: "crunch", input: {} }] }, { text: "started" }, { text: "the sum is 42" }), tools: [background(300)()] });
    assert.is(await session.send("crunch"), "started");
    assert.equal((await session.info()).openCalls.length, 1, "the call runs on after the answer");
    const answers = await session.idle();
    assert.equal(answers.map(brief), [["message", "completed", "started"], ["wake", "completed", "the sum is 42"]]);
    assert.equal(answers.map((a) => a.activation), [1, 1]);
    const view = await session.info();
    assert.equal([view.status, view.openCalls], ["idle", []]);
    assert.is(answers[1]!.sequence, view.lastSequence);
    assert.equal(await session.idle(), [], "nothing new since the last idle()");
  });
});

test("next() hands out each answer once, in order, waiting for the wake turn; iterating the session goes on from there; a deleted session ends both", async () => {
  await withBrain(async (brain) => {
    const session = await brain.sessions.create({
      model: scripted({ toolCalls: [{ name: "crunch", input: {} }] }, { text: "started" }, { text: "woken" }, { text: "second message" }),
      tools: [background(200)()],
    });
    assert.is(await session.send("go"), "started");
    assert.equal(brief(await session.next()), ["message", "completed", "started"]);
    assert.equal(brief(await session.next()), ["wake", "completed", "woken"]);
    const seen: TurnAnswer[] = [];
    const iterating = (async () => {
      for await (const answer of session) seen.push(answer);
    })();
    assert.is(await session.send("again"), "second message");
    while (seen.length < 1) await sleep(10);
    assert.equal(seen.map(brief), [["message", "completed", "second message"]]);
    assert.is(seen[0]!.activation, 2);
    await session.delete();
    await iterating; // ends at session.deleted
    const after = await session.next().then(() => undefined, (e: unknown) => e);
    assert.instance(after, SdkError);
    assert.is((after as SdkError).code, "session_deleted");
  });
});

test("idle() reports a failed turn as a failed answer, and stops at its signal (AbortSignal.timeout) while a call stays open", async () => {
  await withBrain(async (brain) => {
    const held = deferred<ToolContext>();
    const hold = tool({ name: "hold", description: "d", input: z.object({}), run: async (_i, ctx) => void held.resolve(ctx as ToolContext) });
    const session = await brain.sessions.create({ model: scripted({ toolCalls: [{ name: "hold", input: {} }] }, { text: "holding" }), tools: [hold()] });
    assert.is(await session.send("go"), "holding");
    const t0 = performance.now();
    const stopped = await session.idle({ signal: AbortSignal.timeout(150) }).then(() => undefined, (e: unknown) => e);
    assert.is((stopped as Error).name, "TimeoutError", String(stopped));
    assert.ok(performance.now() - t0 < 2000);
    // The call finishes: its wake turn finds the script exhausted, a failed answer.
    await (await held.promise).finish();
    const answers = await session.idle();
    assert.equal(answers.map((a) => [a.cause, a.status]), [["message", "completed"], ["wake", "failed"]]);
    assert.is(answers[0]!.text, "holding");
    assert.ok(answers[1]!.error?.code, "the failure's code");
  });
});

test("send(text, { failOnToolError: true }) rejects tool_failed when a call of its turn failed, with the answer and the failures; without it the answer comes back", async () => {
  await withBrain(async (brain) => {
    const flaky = tool({ name: "flaky", description: "d", input: z.object({ fail: z.boolean() }), run: async ({ fail }, ctx) => {
      if (fail) throw new Error("the disk is full");
      return ctx.finish("fine");
    } });
    const session = await brain.sessions.create({
      model: scripted({ toolCalls: [{ name: "flaky", input: { fail: true } }, { name: "flaky", input: { fail: false } }] }, { text: "one failed" }, { text: "first try" }, { toolCalls: [{ name: "flaky", input: { fail: false } }] }, { text: "all good" }),
      tools: [flaky()],
    });
    const e = await session.send("go", { failOnToolError: true }).then(() => undefined, (e: unknown) => e);
    assert.instance(e, SdkError);
    assert.is((e as SdkError).code, "tool_failed");
    assert.match((e as SdkError).message, /flaky \(.+\) error tool_error: the disk is full/);
    const details = (e as SdkError).details as { answer: string; failures: Array<{ tool: string; status: string; error?: { code: string } }> };
    assert.is(details.answer, "one failed");
    assert.equal(details.failures.map((f) => [f.tool, f.status, f.error?.code]), [["flaky", "error", "tool_error"]]);
    assert.is(await session.send("plain"), "first try", "without the option: the answer");
    assert.is(await session.send("again", { failOnToolError: true }), "all good", "no failure in this turn: the answer");
  });
});

test.run();
