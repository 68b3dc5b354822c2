import type { JournalRecord } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";

/**
 * The sessions of a batch whose records do not follow their last committed sequence one by one
 * (a gap, or a sequence already written). Such a session was run from a memory out of step with
 * the journal (a run that kept going after one of its writes failed, or one that read its head
 * before another node wrote); writing would break the journal's gap-free order. Every store
 * refuses those sessions' records and writes the rest of the batch.
 */
export function outOfStepSessions(records: JournalRecord[], lastSequenceOf: (sessionId: string) => number): ReadonlySet<string> {
  // A lone record (a sequential call's commits) needs no map.
  if (records.length === 1) {
    const r = records[0]!;
    return r.sequence === lastSequenceOf(r.sessionId) + 1 ? NONE : new Set([r.sessionId]);
  }
  // One session's records in order (a call's result and finish): one pass, no map.
  if (oneSessionInStep(records, lastSequenceOf)) return NONE;
  // The next sequence expected of each session in the batch; -1 once it is out of step.
  const next = new Map<string, number>();
  let out: Set<string> | undefined;
  for (const r of records) {
    const expected = next.get(r.sessionId) ?? lastSequenceOf(r.sessionId) + 1;
    if (expected < 0) continue;
    if (r.sequence === expected) next.set(r.sessionId, expected + 1);
    else {
      (out ??= new Set()).add(r.sessionId);
      next.set(r.sessionId, -1);
    }
  }
  return out ?? NONE;
}

const NONE: ReadonlySet<string> = new Set();

/** Whether the batch is one session's records, each following the one before from its last committed sequence. */
export function oneSessionInStep(records: JournalRecord[], lastSequenceOf: (sessionId: string) => number): boolean {
  const only = records[0]!.sessionId;
  let expected = lastSequenceOf(only) + 1;
  for (const r of records) {
    if (r.sessionId !== only || r.sequence !== expected) return false;
    expected += 1;
  }
  return true;
}

/** The refusal of a record of a session out of step: `unavailable` (the session is read again; the client retries). */
export function outOfStep(record: JournalRecord): BrainRuntimeError {
  return new BrainRuntimeError(
    "unavailable",
    `session ${record.sessionId}: this node's memory of the session is out of step with the journal (record ${record.sequence} does not follow the last written); the session is read again: try again`,
    { sessionId: record.sessionId },
    true,
  );
}
