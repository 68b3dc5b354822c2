import { issues } from "@aexhq/brain-protocol";
import { validateSchema } from "../json-schema.ts";
import { checkJsonTextDepth, tooDeepDetails } from "../../json-limits.ts";

function invalidOutput(message: string, details?: unknown): unknown {
  return { status: "error", error: details === undefined ? { code: "invalid_output", message } : { code: "invalid_output", message, details } };
}

/**
 * The Outcome a guest's `outcome-json` stands for, with the same rules as host tools: it must be
 * JSON and an Outcome envelope (else error/invalid_output); an ok value must satisfy the advertised
 * output schema (else error/invalid_output with the issues); non-success outcomes bypass it.
 */
export function checkGuestOutcome(outcomeJson: string, outputSchema: unknown): unknown {
  let value: unknown;
  const tooDeep = checkJsonTextDepth(outcomeJson, "outcome-json");
  if (tooDeep !== undefined) return invalidOutput(tooDeep, tooDeepDetails());
  try {
    value = JSON.parse(outcomeJson);
  } catch (e) {
    return invalidOutput(`outcome-json is not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  const envelope = issues("Outcome", value);
  if (envelope.length > 0) return invalidOutput("outcome-json is not an Outcome envelope", envelope);
  const outcome = value as { status: string; value?: unknown };
  if (outcome.status === "ok" && outputSchema !== undefined) {
    const found = validateSchema(outputSchema, outcome.value);
    if (found.length > 0) return invalidOutput("output does not match the tool's output schema", found);
  }
  return outcome;
}
