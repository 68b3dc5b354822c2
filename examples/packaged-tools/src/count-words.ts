import { tool } from "@aexhq/brain";
import { z } from "zod";

/** Counts the words of a text (whitespace-separated). */
export const countWords = tool({
  name: "count_words",
  description: "Count the words of a text.",
  input: z.object({ text: z.string() }),
  output: z.object({ words: z.number().int().nonnegative() }),
  run: async ({ text }) => ({ words: text.split(/\s+/).filter(Boolean).length }),
});
