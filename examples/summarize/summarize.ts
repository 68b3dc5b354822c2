// The document summarizer: one tool that asks the session's model for a summary with its own
// explicit messages (ctx.model), and publishes a structured result with model-facing text (content).
import { tool } from "@aexhq/brain";
import { z } from "zod";

export const summarize = tool({
  name: "summarize",
  description: "Summarize one document in a sentence.",
  input: z.object({ title: z.string(), text: z.string() }),
  output: z.object({ title: z.string(), summary: z.string(), words: z.number().int() }),
  run: async ({ title, text }, ctx) => {
    // Independent of the conversation: no system prompt, tools or history unless given here.
    const reply = await ctx.model({
      system: "Summarize the document in one sentence.",
      messages: [{ role: "user", content: text }],
      maxTokens: 200,
    });
    const words = text.split(/\s+/).filter(Boolean).length;
    // The journal keeps the structured value; the Agentloop shows the model the content text.
    return ctx.finish({ title, summary: reply.text, words }, { content: `${title} (${words} words): ${reply.text}` });
  },
});
