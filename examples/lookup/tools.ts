// The spec's first example: an application function placed as a tool.
import { tool } from "@aexhq/brain";
import { z } from "zod";

/** The application's own state; here an in-memory table. */
const rows = new Map<string, { value: string }>([
  ["customer:42", { value: "Ada Lovelace" }],
  ["customer:7", { value: "Grace Hopper" }],
]);
export const database = {
  get: async (key: string): Promise<{ value: string } | null> => rows.get(key) ?? null,
};

export const lookup = tool({
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
