import type { JournalRecord } from "@aexhq/brain-protocol";
import { BatchingStore } from "./store.ts";
import type { HostRow } from "./store.ts";

/** In-memory journal for tests and `journal: "memory"`: same group-commit timing as SQLite, nothing on disk. */
export class MemoryStore extends BatchingStore {
  readonly kind = "memory" as const;
  private records: JournalRecord[] = [];
  private hosts = new Map<string, HostRow>();

  protected commitBatch(records: JournalRecord[]): void {
    // Deep copies, so a caller mutating its object cannot change committed history.
    for (const r of records) this.records.push(structuredClone(r));
  }
  protected closeStorage(): void {}
  loadRecords(): JournalRecord[] {
    return this.records.map((r) => structuredClone(r));
  }
  saveHost(row: HostRow): void {
    this.hosts.set(row.hostId, structuredClone(row));
  }
  loadHosts(): HostRow[] {
    return [...this.hosts.values()].map((r) => structuredClone(r));
  }
}
