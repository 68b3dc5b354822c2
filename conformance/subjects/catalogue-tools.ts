// The conformance catalogue (conformance/CATALOGUE.md) implemented with the SDK. The same file
// serves Node and Deno: `@aexhq/brain` resolves to sdk-node under Node and, through
// sdk-deno/deno.json, to sdk-deno/mod.ts under Deno.
import { tool } from "@aexhq/brain";
import { z } from "zod";

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
  });

/**
 * The `digest_edges` input schema: what a JSON serializer that is not RFC 8785 gets wrong. Keys that
 * sort differently by UTF-16 code units and by code points ("😀" before "\ufffd"), non-ASCII and
 * U+2028 left literal, control characters escaped, numbers written as ECMAScript writes them (1e21 →
 * 1e+21, 1e-7, 0.000001, 100000000000000000000), nested key order.
 */
const digestEdgeInput = z.object({
  "\ufffd": z.string().optional().describe("replacement character \u2028 line separator é ü 😀 \u0007 bell \t tab \"quote\" \\ back"),
  "😀": z.number().min(1e-7).max(1e21).optional(),
  "é": z.number().multipleOf(0.000001).optional(),
  "Z": z.number().max(100000000000000000000).optional(),
  a: z.object({ z: z.boolean().optional(), b: z.literal(-0.5).optional() }).optional(),
});

class NotPlainData { constructor(readonly x = 1) {} }

/** One ctx.environments operation for the `environments` tool (the contract's EnvironmentRequest, loosely). */
const environmentRequest = z.object({
  operation: z.enum(["list", "get", "create", "update", "setup", "delete", "call"]),
  name: z.string().optional(),
  spec: z.json().optional(),
  tool: z.string().optional(),
  input: z.json().optional(),
});

const notJson: Record<string, () => unknown> = {
  undefined: () => undefined,
  nan: () => Number.NaN,
  infinity: () => Number.POSITIVE_INFINITY,
  bigint: () => 10n,
  date: () => new Date(0),
  map: () => new Map([["a", 1]]),
  class: () => new NotPlainData(),
};

const malformed: Record<string, unknown> = {
  ok_without_value: { status: "ok" },
  error_without_code: { status: "error", error: { message: "m" } },
  timeout_with_value: { status: "timeout", value: 1 },
};

/**
 * `versioned` is the tool whose advertised input schema the `changed-schema` variant changes (it
 * adds a required `note: string`); its behaviour is the same and it reports which variant ran.
 */
function versioned(variant: string | undefined) {
  const changed = variant === "changed-schema";
  const input = changed ? z.object({ ms: z.number().int(), note: z.string() }) : z.object({ ms: z.number().int() });
  return tool({
    name: "versioned", description: "Sleep observing the signal; its input schema depends on the catalogue variant.",
    input,
    run: async ({ ms }, ctx) => {
      await sleep(ms, ctx.signal);
      if (ctx.signal.aborted) return;
      return ctx.finish({ slept: ms, variant: changed ? "changed-schema" : "original" });
    },
  });
}

/** The catalogue as a variant (BRAIN_CONFORMANCE_VARIANT) advertises it; undefined = the plain catalogue. */
export function catalogueFor(variant: string | undefined) {
  if (variant !== undefined && variant !== "changed-schema") throw new Error(`unknown catalogue variant ${JSON.stringify(variant)}`);
  return [...catalogue, versioned(variant)];
}

/** Every catalogue tool except `versioned` (whose schema depends on the variant). */
export const catalogue = [
  tool({ name: "echo", description: "Finish with the input value.", input: z.object({ value: z.json() }), run: async ({ value }, ctx) => ctx.finish({ value }) }),
  tool({
    name: "fail", description: "Finish with an error outcome.",
    input: z.object({ code: z.string(), message: z.string(), retryable: z.boolean().optional(), details: z.json().optional() }),
    run: async (e, ctx) => ctx.finish({ status: "error", error: e }),
  }),
  // Schema text that only an RFC 8785 digest gets right (see digestEdgeInput): registering it is the test.
  tool({ name: "digest_edges", description: "Finish with the input; its input schema holds the digest's edge cases.", input: digestEdgeInput, run: async (input, ctx) => ctx.finish(input) }),
  tool({ name: "throw", description: "Throw.", input: z.object({ message: z.string() }), run: async ({ message }) => { throw new Error(message); } }),
  tool({ name: "reserved_data", description: "Business data with a reserved status inside ok.", input: z.object({}), run: async (_, ctx) => ctx.finish({ status: "ok", value: { status: "error", note: "business data" } }) }),
  tool({ name: "other_status", description: "A non-reserved status is data.", input: z.object({}), run: async (_, ctx) => ctx.finish({ status: "done", count: 2 }) }),
  tool({
    name: "malformed", description: "A malformed envelope.",
    input: z.object({ variant: z.enum(["ok_without_value", "error_without_code", "timeout_with_value"]) }),
    run: async ({ variant }, ctx) => ctx.finish(malformed[variant] as never),
  }),
  tool({
    name: "not_json", description: "A value that is not JSON.",
    input: z.object({ kind: z.enum(["undefined", "nan", "infinity", "bigint", "date", "map", "class"]) }),
    run: async ({ kind }, ctx) => ctx.finish({ v: notJson[kind]!() } as never),
  }),
  tool({
    name: "typed_output", description: "Output checked against { n: integer }.",
    input: z.object({ good: z.boolean() }), output: z.object({ n: z.number().int() }),
    run: async ({ good }, ctx) => ctx.finish((good ? { n: 1 } : { n: "one" }) as never),
  }),
  tool({
    name: "typed_error", description: "An error outcome skips output validation.",
    input: z.object({}), output: z.object({ n: z.number().int() }),
    run: async (_, ctx) => ctx.finish({ status: "error", error: { code: "nope", message: "m" } }),
  }),
  tool({
    name: "defaults", description: "Defaults and transforms reach run.",
    input: z.object({ name: z.string(), count: z.number().int().default(1), shout: z.string().transform((s) => s.toUpperCase()).optional() }),
    run: async (input, ctx) => ctx.finish(input),
  }),
  tool({ name: "strict", description: "Strict input.", input: z.strictObject({ a: z.string() }), run: async ({ a }, ctx) => ctx.finish({ a }) }),
  tool({ name: "strip", description: "Ordinary input strips extras.", input: z.object({ a: z.string() }), run: async (input, ctx) => ctx.finish(input) }),
  tool({
    name: "emit_then_finish", description: "Emit count events, then finish with their sequences.",
    input: z.object({ count: z.number().int() }),
    run: async ({ count }, ctx) => {
      const sequences: number[] = [];
      for (let i = 0; i < count; i++) sequences.push(await ctx.emit("progress", { i }));
      return ctx.finish({ sequences });
    },
  }),
  tool({
    name: "emit_after_finish", description: "Emit after finish; the emission is rejected.",
    input: z.object({}),
    run: async (_, ctx) => {
      await ctx.finish({ done: true });
      await ctx.emit("late", {}).catch(() => undefined);
    },
  }),
  tool({
    name: "multi_result", description: "emitResult count times, then finish().",
    input: z.object({ count: z.number().int() }),
    run: async ({ count }, ctx) => {
      for (let i = 0; i < count; i++) await ctx.emitResult({ i });
      await ctx.finish();
    },
  }),
  tool({
    name: "with_content", description: "A result with model-facing content.",
    input: z.object({ error: z.boolean() }),
    run: async ({ error }, ctx) => ctx.finish(error ? { status: "error", error: { code: "bad", message: "bad" } } : { v: 1 }, { content: "model-facing text" }),
  }),
  tool({
    name: "return_then_finish", description: "Return a value, finish later in the background.",
    input: z.object({ delayMs: z.number().int() }),
    run: async ({ delayMs }, ctx) => {
      setTimeout(() => void ctx.finish({ phase: "finished" }), delayMs);
      return { phase: "returned" };
    },
  }),
  tool({
    name: "return_nothing", description: "Return nothing, finish later.",
    input: z.object({ delayMs: z.number().int() }),
    run: async ({ delayMs }, ctx) => { setTimeout(() => void ctx.finish({ late: true }), delayMs); },
  }),
  tool({ name: "forget", description: "Return and never finish.", input: z.object({}), run: async () => ({ forgot: true }) }),
  tool({
    name: "sleep", description: "Sleep, observing the signal.",
    input: z.object({ ms: z.number().int() }),
    run: async ({ ms }, ctx) => {
      await sleep(ms, ctx.signal);
      if (ctx.signal.aborted) return;
      return ctx.finish({ slept: ms });
    },
  }),
  tool({
    name: "sleep_then_finish", description: "Sleep ignoring the signal, then finish late.",
    input: z.object({ ms: z.number().int() }),
    run: async ({ ms }, ctx) => { await sleep(ms); return ctx.finish({ late: true }); },
  }),
  tool({
    name: "slow_validation", description: "An asynchronous input check that takes ms.",
    input: z.object({ ms: z.number().int() }).refine(async ({ ms }) => { await sleep(ms); return true; }),
    run: async (_, ctx) => ctx.finish({ validated: true }),
  }),
  tool({
    name: "big_emit", description: "Emit a large event.",
    input: z.object({ bytes: z.number().int() }),
    run: async ({ bytes }, ctx) => {
      try {
        await ctx.emit("blob", { s: "x".repeat(bytes) });
      } catch (e) {
        return ctx.finish({ status: "error", error: { code: (e as { code?: string }).code ?? "tool_error", message: "emit rejected" } });
      }
      return ctx.finish({ ok: true });
    },
  }),
  tool({
    name: "environments", description: "Perform Environment control operations in order (ctx.environments) and finish with each one's answer.",
    input: z.object({ requests: z.array(environmentRequest) }),
    run: async ({ requests }, ctx) => {
      const answers: unknown[] = [];
      for (const r of requests) {
        const env = ctx.environments;
        const name = r.name ?? "";
        try {
          let ok: unknown;
          if (r.operation === "list") ok = await env.list();
          else if (r.operation === "get") ok = await env.get(name);
          else if (r.operation === "create") ok = await env.create(r.spec as never);
          else if (r.operation === "update") ok = await env.update(name, (r.spec ?? {}) as never);
          else if (r.operation === "setup") ok = await env.setup(name);
          else if (r.operation === "delete") ok = (await env.delete(name)) ?? null;
          else ok = await env.call(name, { tool: r.tool ?? "", input: r.input ?? {} });
          answers.push({ ok });
        } catch (e) {
          const missing = (e as { details?: { missing?: unknown } }).details?.missing;
          answers.push({ error: { code: (e as { code?: string }).code ?? "thrown", ...(typeof missing === "string" ? { missing } : {}) } });
        }
      }
      return ctx.finish({ answers });
    },
  }),
  tool({
    name: "ask_model", description: "Ask the session's model the prompt (ctx.model) and finish with its text.",
    input: z.object({ prompt: z.string() }),
    run: async ({ prompt }, ctx) => {
      let reply;
      try {
        reply = await ctx.model({ messages: [{ role: "user", content: prompt }] });
      } catch (e) {
        return ctx.finish({ status: "error", error: { code: (e as { code?: string }).code ?? "tool_error", message: "the model call failed" } });
      }
      return ctx.finish({ text: reply.text });
    },
  }),
];
