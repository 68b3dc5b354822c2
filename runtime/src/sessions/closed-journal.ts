import type { JournalRecord } from "@aexhq/brain-protocol";

/** What readers (the events route, SSE) need of a session's committed records. */
export interface SessionJournal {
  readonly lastSequence: number;
  /** Committed records with a sequence above `sequence`. */
  after(sequence: number): JournalRecord[];
  /** Called for every later commit, in order; returns the unsubscribe function. */
  onCommit(listener: (r: JournalRecord) => void): () => void;
}

/** The journal of a session the runtime forgot (deleted): the store's records, nothing more will come. */
export class ClosedJournal implements SessionJournal {
  constructor(private records: JournalRecord[]) {}
  get lastSequence(): number {
    return this.records.length === 0 ? 0 : this.records[this.records.length - 1]!.sequence;
  }
  after(sequence: number): JournalRecord[] {
    return this.records.slice(Math.max(0, sequence));
  }
  onCommit(): () => void {
    return () => {};
  }
}
