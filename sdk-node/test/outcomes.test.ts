import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { tool } from "../src/index.ts";
import { withBrain, runStep, ofCall } from "./helpers/brain.mts";

class Point { x = 1; y = 2 }
const cases: Record<string, () => unknown> = {
  error: () => ({ status: "error", error: { code: "not_found", message: "no row 7", retryable: true, details: { id: 7 } } }),
  throws: () => { throw new Error("kaput"); },
  reservedInsideOk: () => ({ status: "ok", value: { status: "error", note: "business data" } }),
  otherStatus: () => ({ status: "shipped", id: 1 }),
  malformedOk: () => ({ status: "ok" }),
  malformedError: () => ({ status: "error", error: { message: "no code" } }),
  malformedTimeout: () => ({ status: "timeout", value: 1 }),
  undefinedField: () => ({ a: undefined }),
  nan: () => NaN,
  infinity: () => Infinity,
  bigint: () => 10n,
  date: () => new Date(0),
  map: () => new Map([["a", 1]]),
  classInstance: () => new Point(),
};

const produce = tool({
  name: "produce", description: "returns a chosen value", input: z.object({ case: z.string() }),
  run: async (input, ctx) => ctx.finish(cases[input.case]!()),
});

function lastOf(all: any[], id: string) {
  const call = ofCall(all, id) as any[];
  return { result: call.find((r) => r.type === "tool.result")?.data.outcome, finished: call.find((r) => r.type === "tool.finished")!.data };
}

test("3. outcomes through the runtime: error fields kept, throw → tool_error, reserved status inside ok, other status is data, malformed → invalid_output, non-JSON rejected", async () => {
  await withBrain(async (brain) => {
    const names = Object.keys(cases);
    const { all, ids } = await runStep(brain, [produce()], names.map((c) => ({ name: "produce", input: { case: c } })));
    const by = Object.fromEntries(names.map((n, i) => [n, lastOf(all, ids[i]!)]));
    assert.equal(by.error.finished.error, { code: "not_found", message: "no row 7", retryable: true, details: { id: 7 } });
    assert.equal(by.error.result, cases.error!());
    assert.is(by.throws.finished.status, "error");
    assert.is(by.throws.finished.error.code, "tool_error");
    assert.is(by.throws.finished.error.message, "kaput");
    assert.equal(by.reservedInsideOk.result, { status: "ok", value: { status: "error", note: "business data" } });
    assert.is(by.reservedInsideOk.finished.status, "ok");
    assert.equal(by.otherStatus.result, { status: "ok", value: { status: "shipped", id: 1 } });
    for (const n of ["malformedOk", "malformedError", "malformedTimeout", "undefinedField", "nan", "infinity", "bigint", "date", "map", "classInstance"]) {
      assert.is(by[n].finished.status, "error", n);
      assert.is(by[n].finished.error.code, "invalid_output", n);
    }
  });
});

test("a result or finish over the frame limit, refused before it is sent, ends the call invalid_output at once (not at its deadline)", async () => {
  await withBrain(async (brain) => {
    const big = "x".repeat(1_100_000);
    const huge = tool({
      name: "huge", description: "a result over maxFrameBytes", input: z.object({ how: z.enum(["return", "finish"]) }),
      run: async ({ how }, ctx) => {
        if (how === "return") return { big };
        try {
          await ctx.finish({ big });
        } catch (e) {
          // The tool sees the local refusal; the call is ended for it all the same.
          return void assert.is((e as { code?: string }).code, "frame_too_large");
        }
      },
    });
    const started = Date.now();
    const { all, ids } = await runStep(brain, [huge()], [{ name: "huge", input: { how: "return" } }, { name: "huge", input: { how: "finish" } }]);
    for (const id of ids) {
      const { finished } = lastOf(all, id);
      assert.is(finished.status, "error", JSON.stringify(finished));
      assert.is(finished.error.code, "invalid_output");
      assert.match(finished.error.message, "frame_too_large");
    }
    assert.ok(Date.now() - started < 10_000, "ended at once, not at a deadline");
  });
});

test("3. output that fails the output schema → invalid_output; non-success outcomes skip output validation", async () => {
  await withBrain(async (brain) => {
    const typed = tool({
      name: "typed", description: "typed output", input: z.object({ mode: z.enum(["bad", "error", "good"]) }), output: z.object({ value: z.string() }),
      // Casts: wrong on purpose (a number; an extra key the schema strips), to reach the runtime checks past the output type.
      run: async ({ mode }, ctx) => ctx.finish(mode === "bad" ? ({ value: 1 } as never) : mode === "error" ? { status: "error", error: { code: "upstream", message: "down" } } : ({ value: "x", extra: 1 } as { value: string })),
    });
    const { all, ids } = await runStep(brain, [typed()], ["bad", "error", "good"].map((mode) => ({ name: "typed", input: { mode } })));
    const [bad, error, good] = ids.map((id) => lastOf(all, id));
    assert.is(bad!.finished.error.code, "invalid_output");
    assert.ok(Array.isArray(bad!.finished.error.details), "zod issues in details");
    assert.equal(error!.finished.error, { code: "upstream", message: "down" });
    assert.equal(good!.result, { status: "ok", value: { value: "x" } }, "parsed output (extras stripped)");
  });
});

test.run();
