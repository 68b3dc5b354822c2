/**
 * The text of a frame this host sends. A `finish` (one per call, on the call path) is written out
 * with its keys in the order `finishFrame` and `request` give them (type, callId, outcome, content,
 * ref): the same text as `JSON.stringify(frame)`, without serializing the frame object itself
 * (its walk and toJSON lookups were about half of the ~0.8 µs a finish's text cost). The
 * outcome, content and call id are still serialized by JSON.stringify, so they read as before.
 */
export function frameText(frame: Record<string, unknown> & { type: string }): string {
  if (frame.type !== "finish" || typeof frame.callId !== "string" || typeof frame.ref !== "number") return JSON.stringify(frame);
  const outcome = frame.outcome === undefined ? "" : `,"outcome":${JSON.stringify(frame.outcome)}`;
  const content = frame.content === undefined ? "" : `,"content":${JSON.stringify(frame.content)}`;
  return `{"type":"finish","callId":${JSON.stringify(frame.callId)}${outcome}${content},"ref":${JSON.stringify(frame.ref)}}`;
}
