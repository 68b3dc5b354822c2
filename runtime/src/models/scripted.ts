import type { ModelRequest, ScriptedModelConfig } from "@aexhq/brain-protocol";
import { ModelCallError } from "./provider.ts";
import type { ModelCallContext, ModelProvider, ModelStreamEvent } from "./provider.ts";

/**
 * The deterministic offline model: step i answers the session's i-th model call. The index comes
 * from the journal (count of model.response records), so a restarted runtime continues the script.
 */
export class ScriptedProvider implements ModelProvider {
  readonly name = "scripted";
  readonly readsRequest = false;
  constructor(private config: ScriptedModelConfig) {}

  async *stream(_request: ModelRequest, ctx: ModelCallContext): AsyncIterable<ModelStreamEvent> {
    const step = this.config.script[ctx.index];
    if (step === undefined) {
      throw new ModelCallError("script_exhausted", `the scripted model has ${this.config.script.length} step(s) and this is model call ${ctx.index + 1}`);
    }
    const calls = (step.toolCalls ?? []).map((c, i) => ({ id: `call_${ctx.index + 1}_${i + 1}`, name: c.name, input: c.input ?? null }));
    const deadlineMs: Record<string, number> = {};
    (step.toolCalls ?? []).forEach((c, i) => {
      if (c.deadlineMs !== undefined) deadlineMs[calls[i]!.id] = c.deadlineMs;
    });
    const text = step.text ?? "";
    if (text) yield { type: "text_delta", text };
    for (const call of calls) yield { type: "tool_call", call };
    yield {
      type: "done",
      result: { text, toolCalls: calls, stopReason: calls.length > 0 ? "tool_calls" : "end", usage: { inputTokens: 0, outputTokens: 0 } },
      hints: { deadlineMs },
    };
  }
}
