// The tool both processes serve: it answers at once ("started") and goes on in the background,
// finishing later with its result. Brain journals that result and wakes the session's Agentloop
// into a new turn, whose answer no send() returns: session.idle() and session.next() do.
import { tool } from "@aexhq/brain";
import { z } from "zod";

export const crunch = tool({
  name: "crunch",
  description: "Add up numbers, in the background.",
  input: z.object({ numbers: z.array(z.number()) }),
  output: z.object({ sum: z.number() }),
  run: async ({ numbers }, ctx) => {
    await ctx.emit("crunch_started", { count: numbers.length });
    // Stands in for slow work; the call stays open after `run` returns.
    setTimeout(() => void ctx.finish({ sum: numbers.reduce((a, b) => a + b, 0) }), 300);
  },
});
