import { LIMITS } from "@aexhq/brain-protocol";
import type { ErrorFrame } from "@aexhq/brain-protocol";
import { checkJsonTextDepth, tooDeepDetails } from "../json-limits.ts";

/**
 * The `error` frame for a host frame nested deeper than maxJsonDepth, or undefined when it is
 * within the limit (or too large: the router answers that `frame_too_large`). Checked on the text
 * before the router parses and validates it, so nothing recursive (validators, the journal's
 * serializer) ever sees it. The answer carries the frame's `ref` (read with JSON.parse, which is
 * not recursive) so the host's pending emission is refused, and nothing of it is committed.
 */
export function tooDeepFrame(raw: string): ErrorFrame | undefined {
  if (raw.length > LIMITS.maxFrameBytes) return undefined;
  const message = checkJsonTextDepth(raw, "frame");
  if (message === undefined) return undefined;
  const error = { code: "invalid_frame", message, details: tooDeepDetails() };
  let ref: unknown;
  try {
    ref = (JSON.parse(raw) as { ref?: unknown } | null)?.ref;
  } catch {
    // Not JSON either: the depth is the first thing wrong with it.
  }
  return typeof ref === "number" && Number.isInteger(ref) && ref >= 0 ? { type: "error", ref, error } : { type: "error", error };
}
