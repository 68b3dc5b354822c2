// The tool the MCP example serves, declared once with tool(): over HTTP by main.ts's host, over stdio
// by stdio-server.ts.
import { z } from "zod";
import { tool } from "@aexhq/brain";

export const countWords = tool({
  name: "count_words",
  description: "Counts the words of a text, reporting progress per line.",
  input: z.object({ text: z.string() }),
  output: z.object({ words: z.number(), lines: z.number() }),
  run: async ({ text }, ctx) => {
    const lines = text.split("\n");
    let words = 0;
    for (const [i, line] of lines.entries()) {
      words += line.split(/\s+/).filter(Boolean).length;
      await ctx.emit("progress", { progress: i + 1, total: lines.length, message: `line ${i + 1}` });
    }
    return ctx.finish({ words, lines: lines.length }, { content: `${words} words on ${lines.length} lines` });
  },
});
