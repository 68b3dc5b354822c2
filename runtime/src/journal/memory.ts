import type { JournalRecord } from "@aexhq/brain-protocol";
import { BatchingStore } from "./store.ts";
import type { HostRow } from "./store.ts";

/**
 * In-memory journal for tests and `journal: "memory"`: same group-commit timing as SQLite, nothing
 * on disk. Records are frozen at admission (BatchingStore), so they are kept by reference, shared
 * with the session that holds them, never copied. A session the runtime forgot (deleted) is kept
 * as one JSON text, what a disk store would hold, so its journal stays readable at a fraction of
 * the memory of live objects.
 */
export class MemoryStore extends BatchingStore {
  readonly kind = "memory" as const;
  private live = new Map<string, JournalRecord[]>();
  private compacted = new Map<string, string>();
  private hosts = new Map<string, HostRow>();

  protected commitBatch(records: JournalRecord[]): void {
    for (const r of records) {
      let list = this.live.get(r.sessionId);
      if (list === undefined) {
        const text = this.compacted.get(r.sessionId);
        list = text === undefined ? [] : (JSON.parse(text) as JournalRecord[]);
        this.compacted.delete(r.sessionId);
        this.live.set(r.sessionId, list);
      }
      list.push(r);
    }
  }
  protected closeStorage(): void {}
  loadRecords(): JournalRecord[] {
    const all: JournalRecord[] = [];
    for (const id of new Set([...this.live.keys(), ...this.compacted.keys()])) all.push(...this.loadSession(id));
    return all;
  }
  loadSession(sessionId: string): JournalRecord[] {
    const live = this.live.get(sessionId);
    if (live !== undefined) return [...live];
    const text = this.compacted.get(sessionId);
    return text === undefined ? [] : (JSON.parse(text) as JournalRecord[]);
  }
  forget(sessionId: string): void {
    const live = this.live.get(sessionId);
    if (live === undefined) return;
    this.compacted.set(sessionId, JSON.stringify(live));
    this.live.delete(sessionId);
  }
  saveHost(row: HostRow): void {
    this.hosts.set(row.hostId, structuredClone(row));
  }
  loadHosts(): HostRow[] {
    return [...this.hosts.values()].map((r) => structuredClone(r));
  }
}
