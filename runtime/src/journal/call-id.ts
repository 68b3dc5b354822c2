/**
 * A tool call's id: `<sessionId>:<sequence>`, the sequence of its tool.call_started record. The
 * format is the contract's (hosts see it); this file is the one place that makes or reads it, so a
 * call's session and record are found from its id alone (a past call, a relayed frame, a takeover).
 */
export function callIdOf(sessionId: string, sequence: number): string {
  return `${sessionId}:${sequence}`;
}

/** The session and tool.call_started sequence a call id names; undefined for anything not of that form. */
export function parseCallId(callId: string): { sessionId: string; sequence: number } | undefined {
  const at = callId.lastIndexOf(":");
  if (at <= 0) return undefined;
  const sequence = Number(callId.slice(at + 1));
  if (!Number.isInteger(sequence) || sequence < 1 || String(sequence) !== callId.slice(at + 1)) return undefined;
  return { sessionId: callId.slice(0, at), sequence };
}

/** The session part of a call id, unchecked beyond its separator (for lookups by the exact id). */
export function sessionOfCallId(callId: string): string | undefined {
  const at = callId.lastIndexOf(":");
  return at <= 0 ? undefined : callId.slice(0, at);
}

/** Whether `callId` is a call of session `sessionId`. */
export function isCallOf(callId: string, sessionId: string): boolean {
  return parseCallId(callId)?.sessionId === sessionId;
}
