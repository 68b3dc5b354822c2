import type { JournalRecord, SessionCreatedRecord } from "@aexhq/brain-protocol";
import type { JournalStore } from "../journal/store.ts";
import { RequestExpander } from "../agentloop/messages.ts";

/** What readers (the events route, SSE) need of a session's committed records. */
export interface SessionJournal {
  readonly lastSequence: number;
  /** Committed records with a sequence above `sequence` (and at most `through`, when given). */
  after(sequence: number, through?: number): Promise<JournalRecord[]>;
  /** Called for every later commit, in order; returns the unsubscribe function. */
  onCommit(listener: (r: JournalRecord) => void): () => void;
}

/** A session's journal read from the store as it is now: a deleted session, or a one-off read of one that is not resident. */
export class StoredJournal implements SessionJournal {
  constructor(
    private store: JournalStore,
    private sessionId: string,
    readonly lastSequence: number,
  ) {}
  after(sequence: number, through = this.lastSequence): Promise<JournalRecord[]> {
    return this.store.read(this.sessionId, sequence, Math.min(through, this.lastSequence));
  }
  onCommit(): () => void {
    return () => {};
  }
}

/**
 * A journal whose Agentloop model.request records come with `request` filled in (`expand=requests`).
 * Reading after any sequence reads the session's records from 1, since a request is rebuilt from
 * the records before it; later commits are expanded as they come.
 */
export class ExpandedJournal implements SessionJournal {
  private expander: RequestExpander;
  constructor(
    private base: SessionJournal,
    private created: SessionCreatedRecord["data"],
  ) {
    this.expander = new RequestExpander(created);
  }
  get lastSequence(): number {
    return this.base.lastSequence;
  }
  async after(sequence: number, through?: number): Promise<JournalRecord[]> {
    if (sequence < this.expander.through) this.expander = new RequestExpander(this.created);
    const out: JournalRecord[] = [];
    for (const r of await this.base.after(this.expander.through, through)) {
      const e = this.expander.next(r);
      if (r.sequence > sequence) out.push(e);
    }
    return out;
  }
  onCommit(listener: (r: JournalRecord) => void): () => void {
    // Only the record right after those expanded so far: a reader still reading its backlog in
    // slices (SSE) gets the records in between from after(), in order.
    return this.base.onCommit((r) => {
      if (r.sequence === this.expander.through + 1) listener(this.expander.next(r));
    });
  }
}
