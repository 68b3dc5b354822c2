// Type test, compiled by tsc in sdk-core/test/types.test.ts (never run). Each `@ts-expect-error`
// line must fail to compile: tsc reports an unused directive otherwise, so the test fails both
// when a wrong output compiles and when a right one does not.
import { z } from "zod";
import { tool, type ToolContext } from "../../src/index.ts";

const lookup = tool({
  name: "lookup",
  description: "Look up one record.",
  input: z.object({ id: z.string() }),
  output: z.object({ value: z.string() }).nullable(),
  run: async ({ id }, ctx) => {
    await ctx.emitResult({ value: id });
    await ctx.emitResult(null);
    await ctx.emitResult({ value: id }, { content: "found" });
    // @ts-expect-error: value must be a string
    await ctx.emitResult({ value: 42 });
    // @ts-expect-error: a required field is missing
    await ctx.emitResult({});
    // @ts-expect-error: not the output shape at all
    await ctx.emitResult("text");
    // Explicit Outcome envelopes are still allowed, and `ok` carries the typed value.
    await ctx.emitResult({ status: "ok", value: { value: id } });
    // @ts-expect-error: the ok envelope's value is checked too
    await ctx.emitResult({ status: "ok", value: { value: 1 } });
    if (id === "e") return ctx.finish({ status: "error", error: { code: "not_found", message: "no such record", retryable: false } });
    if (id === "t") return ctx.finish({ status: "timeout", message: "gave up" });
    if (id === "c") return { status: "cancelled" };
    if (id === "u") return { status: "unknown" };
    // @ts-expect-error: an error envelope needs an error object
    if (id === "bad") return ctx.finish({ status: "error", message: "no error object" });
    // @ts-expect-error: wrong type in finish
    if (id === "f") return ctx.finish({ value: true });
    if (id === "none") return ctx.finish();
    if (id === "undef") return;
    if (id === "n") return null;
    return { value: id };
  },
});
void lookup;

// A contextually typed function is checked as a whole: a wrong `return` is reported at `run`.
tool({
  name: "returns_wrong_field",
  description: "Returns a number where the schema has a string.",
  input: z.object({ id: z.string() }),
  output: z.object({ value: z.string() }).nullable(),
  // @ts-expect-error: wrong type returned from run
  run: async ({ id }) => (id === "" ? null : { value: 1 }),
});
tool({
  name: "returns_text",
  description: "Returns a string among right values.",
  input: z.object({ id: z.string() }),
  output: z.object({ value: z.string() }).nullable(),
  // @ts-expect-error: a string is not the output
  run: async ({ id }, ctx) => {
    if (id === "") return ctx.finish(null);
    if (id === "s") return "plain";
    return { value: id };
  },
});
tool({
  name: "returns_bad_envelope",
  description: "Returns an ok envelope with a wrong value.",
  input: z.object({}),
  output: z.object({ value: z.string() }),
  // @ts-expect-error: the ok envelope's value is checked on return too
  run: async () => ({ status: "ok", value: { value: false } }),
});

// A synchronous run is typed the same way.
tool({
  name: "sync",
  description: "Synchronous.",
  input: z.object({}),
  output: z.number(),
  run: () => 1,
});
tool({
  name: "sync_bad",
  description: "Synchronous, wrong.",
  input: z.object({}),
  output: z.number(),
  // @ts-expect-error: a string is not a number
  run: () => "one",
});

// Defaults and transforms apply before Brain sees the value: what run gives is the schema's input.
tool({
  name: "shaped",
  description: "Defaults and a piped transform.",
  input: z.object({}),
  output: z.object({ n: z.string().transform((s) => s.length).pipe(z.number()), tag: z.string().default("x") }),
  run: async (_input, ctx) => {
    await ctx.emitResult({ n: "abc" });
    // @ts-expect-error: n is given as a string (the transform makes the number)
    await ctx.emitResult({ n: 3 });
    return { n: "abcd", tag: "y" };
  },
});

// Without an output schema any value goes, as before.
tool({
  name: "untyped",
  description: "No output schema.",
  input: z.object({}),
  run: async (_input, ctx) => {
    await ctx.emitResult(1);
    await ctx.emitResult({ anything: ["goes"] });
    return "text";
  },
});

// Options stay typed beside the output.
tool({
  name: "opts",
  description: "Options and output.",
  input: z.object({}),
  output: z.string(),
  options: z.object({ prefix: z.string() }),
  run: (_input, ctx) => {
    const prefix: string = ctx.options.prefix;
    // @ts-expect-error: options are not widened
    const wrong: number = ctx.options.prefix;
    void wrong;
    return prefix;
  },
});

// A helper taking the context by its type checks the same way.
async function publish(ctx: ToolContext<Record<string, never>, { value: string }>): Promise<void> {
  await ctx.finish({ value: "ok" });
  // @ts-expect-error: wrong type through the exported ToolContext type
  await ctx.finish({ value: 0 });
}
void publish;
