import type { JournalRecord, SessionCreatedRecord } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";
import { BatchingStore, dataBytes, pageOf } from "./store.ts";
import { oneSessionInStep } from "./out-of-step.ts";
import type { HostRow, KeyRow, KeyedMessage, ListPosition, ListQuery, ListedSession, SessionPage } from "./store.ts";
import { advanceHead, copyHead, hasOpenWork, headStatus, listingOrder, newHead } from "./head.ts";
import type { SessionHead } from "./head.ts";

/**
 * In-memory journal for tests and `journal: "memory"`: same group-commit timing as SQLite, nothing
 * on disk. Records are frozen at admission (BatchingStore), so they are kept by reference, never
 * copied. A deleted session's records are kept as one JSON text, what a disk store would hold, so
 * its journal stays readable at a fraction of the memory of live objects.
 *
 * Listing walks the heads in the listing order, every session's or one owner's (arrays kept sorted,
 * a new session is usually appended at the end): a page costs a binary search and its rows, plus the
 * rows of other states a `status` filter skips (the durable stores keep the state in their index).
 */
export class MemoryStore extends BatchingStore {
  readonly kind = "memory" as const;
  private live = new Map<string, JournalRecord[]>();
  private compacted = new Map<string, string>();
  /** Every session's head, in creation order. */
  private heads = new Map<string, SessionHead>();
  /** Every session's head, and each API key's, oldest listed first (the end is the newest). */
  private ordered: SessionHead[] = [];
  private owned = new Map<string, SessionHead[]>();
  private hosts = new Map<string, HostRow>();
  private keys = new Map<string, KeyRow>();
  /** Per session, the sequence of each message.user record with an idempotency key (what SQLite's partial index holds). */
  private messageKeys = new Map<string, Map<string, number>>();

  protected lastSequenceOf(sessionId: string): number {
    return this.heads.get(sessionId)?.lastSequence ?? 0;
  }

  protected commitBatch(records: JournalRecord[]): void {
    // Check order first, so a bad batch writes nothing (what SQLite's transaction guarantees).
    if (!oneSessionInStep(records, this.lastSequence)) this.checkOrder(records);
    for (const r of records) {
      let head = this.heads.get(r.sessionId);
      const fresh = head === undefined;
      if (head === undefined) this.heads.set(r.sessionId, (head = newHead(r.sessionId)));
      let list = this.live.get(r.sessionId);
      if (list === undefined) {
        const text = this.compacted.get(r.sessionId);
        list = text === undefined ? [] : (JSON.parse(text) as JournalRecord[]);
        this.compacted.delete(r.sessionId);
        this.live.set(r.sessionId, list);
      }
      list.push(r);
      advanceHead(head, r);
      const key = r.type === "message.user" ? r.data.idempotencyKey : undefined;
      if (key !== undefined) {
        let keys = this.messageKeys.get(r.sessionId);
        if (keys === undefined) this.messageKeys.set(r.sessionId, (keys = new Map()));
        if (!keys.has(key)) keys.set(key, r.sequence);
      }
      if (fresh) this.index(head);
      if (head.deleted) {
        this.compacted.set(r.sessionId, JSON.stringify(list));
        this.live.delete(r.sessionId);
      }
    }
  }
  /** Throws `internal` when a record of the batch is not after its session's last one. */
  private checkOrder(records: JournalRecord[]): void {
    const last = new Map<string, number>();
    for (const r of records) {
      const before = last.get(r.sessionId) ?? this.heads.get(r.sessionId)?.lastSequence ?? 0;
      if (r.sequence <= before) throw new BrainRuntimeError("internal", `journal: sequence ${r.sequence} of ${r.sessionId} is not after ${before}`);
      last.set(r.sessionId, r.sequence);
    }
  }

  protected closeStorage(): void {}

  async read(sessionId: string, after = 0, through = Infinity): Promise<JournalRecord[]> {
    const live = this.live.get(sessionId);
    const all = live ?? (this.compacted.has(sessionId) ? (JSON.parse(this.compacted.get(sessionId)!) as JournalRecord[]) : []);
    const out = all.slice(firstAbove(all, after), firstAbove(all, through));
    this.stats.rowsRead += out.length;
    return out;
  }
  async countOpenSessions(owner: string): Promise<number> {
    let n = 0;
    for (const h of this.owned.get(owner) ?? []) if (!h.deleted) n += 1;
    return n;
  }

  async journalBytes(sessionId: string, through: number): Promise<number> {
    return dataBytes(await this.read(sessionId, 0, through));
  }

  async findMessage(sessionId: string, key: string): Promise<KeyedMessage | undefined> {
    const sequence = this.messageKeys.get(sessionId)?.get(key);
    if (sequence === undefined) return undefined;
    const r = (await this.read(sessionId, sequence - 1, sequence))[0];
    return r?.type === "message.user" ? { sequence, activation: r.data.activation, text: r.data.text } : undefined;
  }
  async head(sessionId: string): Promise<SessionHead | undefined> {
    const h = this.heads.get(sessionId);
    return h === undefined ? undefined : copyHead(h);
  }
  async openWork(): Promise<string[]> {
    return [...this.heads.values()].filter(hasOpenWork).map((h) => h.sessionId);
  }
  /** Every session id, deleted ones included, newest first: O(sessions), for tests and tools (listing pages with `listSessions`). */
  sessionIds(): string[] {
    return this.ordered.map((h) => h.sessionId).reverse();
  }

  /** A new session's head into the listing arrays (its createdAt and owner are set by its first record). */
  private index(head: SessionHead): void {
    insertOrdered(this.ordered, head);
    if (head.owner !== undefined) {
      let mine = this.owned.get(head.owner);
      if (mine === undefined) this.owned.set(head.owner, (mine = []));
      insertOrdered(mine, head);
    }
  }

  async listSessions(query: ListQuery): Promise<SessionPage> {
    const list = query.owner === undefined ? this.ordered : (this.owned.get(query.owner) ?? []);
    const found: ListedSession[] = [];
    for (let i = query.after === undefined ? list.length - 1 : countListedAfter(list, query.after) - 1; i >= 0 && found.length <= query.limit; i--) {
      const head = list[i]!;
      this.stats.headsListed += 1;
      if (query.status !== undefined && headStatus(head) !== query.status) continue;
      const created = this.createdOf(head.sessionId);
      if (created !== undefined) found.push({ head: copyHead(head), created });
    }
    return pageOf(found, query.limit);
  }

  private createdOf(sessionId: string): SessionCreatedRecord["data"] | undefined {
    const live = this.live.get(sessionId);
    const text = live === undefined ? this.compacted.get(sessionId) : undefined;
    const first = live?.[0] ?? (text === undefined ? undefined : (JSON.parse(text) as JournalRecord[])[0]);
    return first?.type === "session.created" ? first.data : undefined;
  }
  async saveHost(row: HostRow): Promise<void> {
    this.hosts.set(row.hostId, structuredClone(row));
  }
  async deleteHost(hostId: string): Promise<void> {
    this.hosts.delete(hostId);
  }
  async loadHosts(): Promise<HostRow[]> {
    return [...this.hosts.values()].map((r) => structuredClone(r));
  }
  async saveKey(row: KeyRow): Promise<void> {
    this.keys.set(row.keyId, { ...row });
  }
  async loadKeys(): Promise<KeyRow[]> {
    return [...this.keys.values()].map((r) => ({ ...r }));
  }
}

/** Index of the first record with a sequence above `sequence` (records are in increasing sequence order). */
function firstAbove(records: JournalRecord[], sequence: number): number {
  let lo = 0;
  let hi = records.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (records[mid]!.sequence <= sequence) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Inserts `head` into `list` (oldest listed first); a new session is usually the newest, so it goes at the end. */
function insertOrdered(list: SessionHead[], head: SessionHead): void {
  if (list.length === 0 || listingOrder(head, list[list.length - 1]!) < 0) {
    list.push(head);
    return;
  }
  list.splice(countListedAfter(list, head), 0, head);
}

/** How many heads of `list` (oldest listed first) come after `at` in the listing order: they are its first ones. */
function countListedAfter(list: SessionHead[], at: ListPosition): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (listingOrder(at, list[mid]!) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
