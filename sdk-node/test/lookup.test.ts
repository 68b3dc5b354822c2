import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { tool } from "../src/index.ts";
import { withBrain, callThenAnswer, records, isFinished, results, finished } from "./helpers/brain.mts";

const store = new Map<string, { value: string }>([["customer:42", { value: "Ada" }]]);
const database = { get: async (key: string) => store.get(key) ?? null };

const lookup = tool({
  name: "lookup",
  description: "Look up one record.",
  input: z.object({ id: z.string() }),
  output: z.object({ value: z.string() }).nullable(),
  options: z.object({ prefix: z.string() }),
  run: async ({ id }, ctx) => {
    await ctx.emit("lookup_started", { id });
    return ctx.finish((await database.get(`${ctx.options.prefix}${id}`)) ?? null);
  },
});

test("1. lookup with prefix customer: returns the stored value; a missing record returns null", async () => {
  await withBrain(async (brain) => {
    const session = await brain.sessions.create({
      model: callThenAnswer([{ name: "lookup", input: { id: "42" } }, { name: "lookup", input: { id: "7" } }], "found"),
      tools: [lookup({ prefix: "customer:" })],
    });
    const answer = await session.send("look up 42 and 7");
    assert.is(answer, "found");
    // send() resolves after the turn completed, and the model ran again only once both calls settled.
    const all = await records(session);
    const done = finished(all);
    assert.is(done.length, 2);
    assert.ok(done.every((f) => f.data.status === "ok"));
    const outs = results(all).map((r) => r.data.outcome);
    assert.equal(outs, [{ status: "ok", value: { value: "Ada" } }, { status: "ok", value: null }]);
    const events = all.filter((r) => r.type === "tool.event");
    assert.is(events.length, 2);
    assert.ok(all.some(isFinished));
  });
});

test.run();
