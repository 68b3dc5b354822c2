/**
 * The runtime's `committed` answer as it writes it (`JSON.stringify({ type, ref, callId, sequence })`),
 * read without the generated router: every frame a tool sends is answered by one, so on a busy
 * host it is the most frequent frame, and parsing and validating it was a tenth of the SDK's work
 * on a call. Only text of exactly that form matches, and such text is a valid CommittedFrame by
 * construction (integers within 2^53, ref ≥ 0, sequence ≥ 1, a callId of the characters call ids are made
 * of); anything else (another key order, whitespace, escapes, other characters) goes through the
 * router, which decides as before.
 */
const COMMITTED = /^\{"type":"committed","ref":(0|[1-9][0-9]{0,14}),"callId":"([A-Za-z0-9_:.-]*)","sequence":([1-9][0-9]{0,14})\}$/;

/** The frame's ref and sequence when `text` is a `committed` frame in the runtime's own form; else undefined. */
export function readCommitted(text: string): { ref: number; callId: string; sequence: number } | undefined {
  // A cheap test first: most other frames differ at their 10th character.
  if (text.charCodeAt(9) !== 99 /* c */) return undefined;
  const m = COMMITTED.exec(text);
  if (m === null) return undefined;
  return { ref: Number(m[1]), callId: m[2]!, sequence: Number(m[3]) };
}
