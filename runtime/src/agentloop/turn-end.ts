import type { ErrorInfo, JournalRecord } from "@aexhq/brain-protocol";

/** How an activation's turn ended: its turn.completed or turn.failed record. */
export interface TurnEnd {
  activation: number;
  status: "completed" | "failed";
  text?: string;
  error?: ErrorInfo;
}

/** What finding a turn end reads of a session's committed records (SessionState, a StoredJournal). */
export interface CommittedRecords {
  readonly lastSequence: number;
  after(sequence: number, through?: number): Promise<JournalRecord[]>;
}

/** Records read at a time while looking for a turn end: a turn rarely has more, and a long one is read in pieces. */
const SLICE = 64;

/** The turn end `r` is, if it ends `activation` after sequence `after` (its message.user). */
export function turnEndOf(r: JournalRecord, activation: number, after: number): TurnEnd | undefined {
  if (r.sequence <= after) return undefined;
  if (r.type === "turn.completed" && r.data.activation === activation) return { activation, status: "completed", text: r.data.text };
  if (r.type === "turn.failed" && r.data.activation === activation) return { activation, status: "failed", error: r.data.error };
  return undefined;
}

/**
 * The first turn end of `activation` committed after sequence `after`: the end of the turn its
 * message started (a later wake turn of the same activation ends after it). Reads the records after
 * the message in slices and stops at the end, so a turn that ended long ago costs its own records only.
 */
export async function findTurnEnd(journal: CommittedRecords, activation: number, after: number): Promise<TurnEnd | undefined> {
  for (let from = after; from < journal.lastSequence; from += SLICE) {
    for (const r of await journal.after(from, from + SLICE)) {
      const end = turnEndOf(r, activation, after);
      if (end !== undefined) return end;
    }
  }
  return undefined;
}
