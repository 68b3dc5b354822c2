import type { z } from "zod";
import {
  validate,
  issues,
  RESERVED_STATUSES,
  type Outcome,
  type ErrorOutcome,
  type TimeoutOutcome,
  type CancelledOutcome,
  type UnknownOutcome,
} from "@aexhq/brain-protocol";
import { notJsonReason } from "./json.ts";
import { issuesOf } from "./schema.ts";

const reserved = new Set<string>(RESERVED_STATUSES);

/**
 * What a tool may publish (`ctx.emitResult`, `ctx.finish`, `return`) when its output schema
 * accepts `T`: the value itself, or an explicit Outcome envelope whose `ok` value is a `T`.
 * `T` is the schema's input type (`z.input`): the value goes through `parseAsync`, so defaults
 * and `.transform(...).pipe(...)` apply before it reaches Brain; for schemas without them it is
 * `z.infer`. A tool without an output schema publishes any JSON (`T` = `unknown`).
 */
export type ToolOutput<T> = T | { status: "ok"; value: T } | ErrorOutcome | TimeoutOutcome | CancelledOutcome | UnknownOutcome;

export function invalidOutput(message: string, details?: unknown): ErrorOutcome {
  return { status: "error", error: { code: "invalid_output", message, ...(details !== undefined ? { details } : {}) } };
}

/** True when `value` claims to be an Outcome envelope: an object whose top-level status is reserved. */
export function isEnvelope(value: unknown): value is { status: string } {
  return typeof value === "object" && value !== null && !Array.isArray(value) && reserved.has((value as { status?: unknown }).status as string);
}

/**
 * Turns what a tool produced into the Outcome the wire carries, applying the rules of the spec:
 * a reserved status is an envelope and must have that envelope's shape; ordinary output and
 * `ok.value` go through the output schema (parseAsync, so transforms apply); non-success outcomes
 * skip it; the final value must be JSON.
 */
export async function toOutcome(value: unknown, output: z.ZodType | undefined): Promise<Outcome> {
  if (output === undefined) return plainOutcome(value);
  const envelope = envelopeOf(value);
  if ("outcome" in envelope) return envelope.outcome;
  const parsed = await output.safeParseAsync(envelope.data);
  if (!parsed.success) return invalidOutput("output does not match the output schema", issuesOf(parsed.error));
  return jsonOutcome(parsed.data);
}

/** `toOutcome` for a tool without an output schema: nothing to await, so it is answered at once. */
export function plainOutcome(value: unknown): Outcome {
  const envelope = envelopeOf(value);
  return "outcome" in envelope ? envelope.outcome : jsonOutcome(envelope.data);
}

/** A reserved status is an envelope and must have its shape; a non-success one is final. Else: the data the output schema sees. */
function envelopeOf(value: unknown): { outcome: Outcome } | { data: unknown } {
  if (!isEnvelope(value)) return { data: value };
  if (!validate.Outcome.Check(value)) return { outcome: invalidOutput(`malformed ${JSON.stringify(value.status)} outcome envelope`, issues("Outcome", value)) };
  if (value.status === "ok") return { data: value.value };
  const reason = notJsonReason(value);
  return { outcome: reason ? invalidOutput(`outcome is not JSON: ${reason}`) : value };
}

function jsonOutcome(data: unknown): Outcome {
  const reason = notJsonReason(data);
  return reason ? invalidOutput(`output is not JSON: ${reason}`) : { status: "ok", value: data };
}

/** A thrown exception becomes `tool_error`, keeping its message (the stack stays local). */
export function thrownOutcome(error: unknown): ErrorOutcome {
  const message = error instanceof Error ? error.message : typeof error === "string" ? error : "the tool threw a non-Error value";
  return { status: "error", error: { code: "tool_error", message } };
}
