import { tool } from "@aexhq/brain";
import { z } from "zod";

/** Turns a title into a URL slug; the application chooses the separator when it places the tool. */
export const slugify = tool({
  name: "slugify",
  description: "Turn a title into a URL slug.",
  input: z.object({ title: z.string().min(1) }),
  output: z.object({ slug: z.string() }),
  options: z.object({ separator: z.string().max(1).default("-") }),
  run: async ({ title }, ctx) => {
    const words = title.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase().match(/[a-z0-9]+/g) ?? [];
    await ctx.emit("slugified", { words: words.length });
    return ctx.finish({ slug: words.join(ctx.options.separator) });
  },
});
