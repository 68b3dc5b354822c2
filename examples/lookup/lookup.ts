// The spec's first example: an application function placed in the registering app.
import { tool } from "@aexhq/brain";
import { z } from "zod";
import { database } from "./database.ts";

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
