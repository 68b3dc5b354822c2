import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { tool } from "../src/index.ts";
import { withBrain, runStep, ofCall } from "./helpers/brain.mts";

test("4. invalid input never reaches run; defaults and transforms reach it; strict objects reject extras; ordinary objects strip them", async () => {
  await withBrain(async (brain) => {
    const seen: unknown[] = [];
    const loose = tool({
      name: "loose", description: "d",
      input: z.object({ n: z.number().default(7), when: z.string().transform((s) => s.toUpperCase()) }),
      run: async (input, ctx) => { seen.push(input); return ctx.finish(null); },
    });
    const strict = tool({ name: "strict", description: "d", input: z.strictObject({ n: z.number() }), run: async (input, ctx) => { seen.push(input); return ctx.finish(null); } });
    const { all, ids } = await runStep(brain, [loose(), strict()], [
      { name: "loose", input: { when: "now", extra: true } },
      { name: "loose", input: { n: "seven", when: "x" } },
      { name: "strict", input: { n: 1, extra: true } },
    ]);
    assert.equal(seen, [{ n: 7, when: "NOW" }], "only the valid call ran, with defaults and transforms, extras stripped");
    for (const id of ids.slice(1)) {
      const fin = ofCall(all, id).find((r) => r.type === "tool.finished") as any;
      assert.is(fin.data.status, "error");
      assert.is(fin.data.error.code, "invalid_input");
      assert.ok(Array.isArray(fin.data.error.details));
    }
  });
});

test("input schemas with async refinements are validated asynchronously, on every call (sync is tried only until Zod says async)", async () => {
  await withBrain(async (brain) => {
    const checked: string[] = [];
    const seen: unknown[] = [];
    const guarded = tool({
      name: "guarded", description: "d",
      input: z.object({ word: z.string() }).refine(async (v) => { checked.push(v.word); await new Promise((r) => setTimeout(r, 5)); return v.word !== "bad"; }, "bad word"),
      run: async (input, ctx) => { seen.push(input); return ctx.finish(null); },
    });
    const { all, ids } = await runStep(brain, [guarded()], [
      { name: "guarded", input: { word: "bad" } },
      { name: "guarded", input: { word: "good" } },
      { name: "guarded", input: { word: "bad" } },
    ]);
    assert.equal(seen, [{ word: "good" }], "the async refinement decided every call");
    const statuses = ids.map((id) => (ofCall(all, id).find((r) => r.type === "tool.finished") as any).data);
    assert.equal(statuses.map((d) => d.status), ["error", "ok", "error"]);
    assert.equal(statuses.map((d) => d.error?.code), ["invalid_input", undefined, "invalid_input"]);
    assert.ok(checked.filter((w) => w === "good").length >= 1);
  });
});

test.run();
