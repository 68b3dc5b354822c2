import { issues, validate } from "@aexhq/brain-protocol";
import type { Outcome } from "@aexhq/brain-protocol";

/**
 * The runtime's check of an Outcome a binding sent. Bindings send envelopes (the SDK applies the
 * reserved-status rules), so anything that is not a valid envelope is the binding's failure:
 * `error`/`invalid_output` with the validation issues.
 */
export function checkOutcome(raw: unknown): { outcome: Outcome; valid: boolean } {
  if (validate.Outcome.Check(raw)) return { outcome: raw, valid: true };
  return {
    valid: false,
    outcome: {
      status: "error",
      error: { code: "invalid_output", message: "the tool's outcome is not a valid Outcome envelope", details: issues("Outcome", raw) },
    },
  };
}
