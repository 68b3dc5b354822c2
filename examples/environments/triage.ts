// A tool with Environment control: it reads issues through the session's `github` binding (the
// operator's http_json Environment) as nested calls of its own, and shows what it may not do.
import { tool } from "@aexhq/brain";
import type { BrainError, Outcome } from "@aexhq/brain";
import { z } from "zod";

export const triage = tool({
  name: "triage",
  description: "Sort issues into open and closed.",
  input: z.object({ numbers: z.array(z.number().int()) }),
  run: async ({ numbers }, ctx) => {
    const bindings = await ctx.environments.list();
    const open: number[] = [];
    const closed: number[] = [];
    for (const number of numbers) {
      // A nested call: journaled with origin = this call, within this call's deadline and budget.
      const outcome: Outcome = await ctx.environments.call("github", { tool: "fetch_issue", input: { number } });
      if (outcome.status === "ok" && (outcome.value as { state?: string }).state === "open") open.push(number);
      else closed.push(number);
    }
    // Not granted: creating bindings needs environments.create.
    const refused = await ctx.environments.create({ name: "scratch" }).then(
      () => undefined,
      (e: BrainError) => ({ code: e.code, missing: (e.details as { missing?: string }).missing }),
    );
    return ctx.finish({ bindings: bindings.map((b) => b.name), open, closed, refused });
  },
});
