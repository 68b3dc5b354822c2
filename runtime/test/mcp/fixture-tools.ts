// Tools declared with the SDK's tool() and served by a real host (Brain#serve), for the MCP server
// tests: plain results, errors, events (progress and log messages), slow and hanging calls.
import { z } from "zod";
import { tool } from "@aexhq/brain";

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Hangs until its deadline or cancellation; records how its signal was aborted. */
export const aborted: string[] = [];

export const echo = tool({
  name: "echo",
  description: "Echoes its text back, with its length.",
  input: z.object({ text: z.string() }),
  output: z.object({ text: z.string(), length: z.number() }),
  run: async ({ text }, ctx) => ctx.finish({ text, length: text.length }),
});

export const add = tool({
  name: "add",
  description: "Adds two numbers; its content is model-facing text.",
  input: z.object({ a: z.number(), b: z.number() }),
  run: async ({ a, b }, ctx) => {
    await ctx.finish({ status: "ok", value: a + b }, { content: `${a} + ${b} = ${a + b}` });
  },
});

export const upper = tool({
  name: "upper",
  description: "Returns its text in capitals: a string value, without content.",
  input: z.object({ text: z.string() }),
  run: async ({ text }, ctx) => ctx.finish(text.toUpperCase()),
});

export const fail = tool({
  name: "fail",
  description: "Always ends with a typed error.",
  input: z.object({}),
  run: async (_input, ctx) => ctx.finish({ status: "error", error: { code: "not_found", message: "no such record", details: { id: 7 } } }),
});

export const steps = tool({
  name: "steps",
  description: "Emits three progress events, then finishes.",
  input: z.object({ n: z.number().int().default(3) }),
  run: async ({ n }, ctx) => {
    for (let i = 1; i <= n; i++) {
      await ctx.emit("progress", { progress: i * 10, total: n * 10, message: `step ${i}` });
      await sleep(20);
    }
    return ctx.finish({ done: n });
  },
});

export const hang = tool({
  name: "hang",
  description: "Never finishes on its own: ends by its deadline, a cancellation or its host's loss.",
  input: z.object({}),
  run: async (_input, ctx) => {
    await ctx.emit("started", {});
    await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
    aborted.push(String(ctx.signal.reason ?? "aborted"));
  },
});

/** Takes factory options: not served over MCP (an MCP client cannot give options). */
export const withOptions = tool({
  name: "with_options",
  description: "Needs options.",
  input: z.object({}),
  options: z.object({ prefix: z.string() }),
  run: async (_input, ctx) => ctx.finish(ctx.options.prefix),
});
