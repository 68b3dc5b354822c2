import type { JournalRecord } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";
import { advanceHead, newHead } from "../journal/head.ts";
import type { SessionHead } from "../journal/head.ts";
import type { PostgresStore } from "../journal/postgres.ts";
import type { HostRow, JournalStore, KeyRow, KeyedMessage, ListQuery, SessionPage, StoreStats } from "../journal/store.ts";
import type { NodeFence } from "./fence.ts";
import { messageOf, stderrLogger } from "../logger.ts";
import type { Logger } from "../logger.ts";

/** A session this node holds: its committed records and its head (its lease token is the fence's). */
interface Held {
  records: JournalRecord[];
  head: SessionHead;
}

/**
 * The journal as one node of several sees it: the synchronous JournalStore the session layer reads,
 * over the PostgreSQL store whose reads are asynchronous. What the session layer reads must be loaded
 * first, by the node (cluster/node.ts), before it hands a request on:
 * - the sessions this node holds a lease on, with their committed records (`hold`, after `acquire`);
 *   a node holds the sessions it runs, and lets go of those that page out or that it lost;
 * - API keys and host registrations (`loadCredentials`), refreshed every lease beat.
 * Listing is asynchronous: a page comes from the database's listing index (`listSessions`), every
 * node's sessions, as committed.
 * Writes go through at once (keys, hosts) or by group commit (records, fenced by the held tokens).
 */
export class NodeJournal implements JournalStore {
  readonly kind = "postgres" as const;
  private held = new Map<string, Held>();
  private keys = new Map<string, KeyRow>();
  private hosts = new Map<string, HostRow>();
  private writes = new Set<Promise<unknown>>();
  /** Host registrations whose DELETE is still in flight. */
  private deleting = new Set<string>();
  /** Sessions recovery should read: set by the node just before it runs the session layer's recovery. */
  recovering: string[] = [];

  private lostListeners: Array<(sessionId: string) => void> = [];

  constructor(
    readonly pg: PostgresStore,
    /** The tokens of the sessions held here, which the store proves with every batch (`pg` was opened with it). */
    private fence: NodeFence,
    private logger: Logger = stderrLogger(),
  ) {
    fence.onRefused((refused) => this.fenced(refused));
  }

  /** Tells `listener` of every session whose lease was found lost on a write: the node stops running it. */
  onLost(listener: (sessionId: string) => void): void {
    this.lostListeners.push(listener);
  }

  get stats(): StoreStats {
    return this.pg.stats;
  }

  holds(sessionId: string): boolean {
    return this.held.has(sessionId);
  }

  get heldCount(): number {
    return this.held.size;
  }

  /** Loads a session whose lease this node just took with `token`: its head and every committed record. */
  async hold(sessionId: string, token: number): Promise<void> {
    this.pg.forgetHead(sessionId);
    const head = await this.pg.head(sessionId);
    const records = head === undefined ? [] : await this.pg.read(sessionId);
    this.held.set(sessionId, { records, head: head ?? newHead(sessionId) });
    this.fence.hold(sessionId, token);
  }

  /** Lets go of a session (paged out, deleted, or lost to another node). */
  release(sessionId: string): void {
    this.held.delete(sessionId);
    this.fence.release(sessionId);
  }

  /** Lets go of every session (this node's own lease expired). */
  releaseAll(): string[] {
    const ids = [...this.held.keys()];
    this.held.clear();
    this.fence.releaseAll();
    return ids;
  }

  /**
   * Called by PostgresStore with the records its fence refused. Only the run they were admitted by
   * is lost: a record from an earlier run of a session this node has since taken again is refused
   * without touching the current run.
   */
  private fenced(refused: Array<{ sessionId: string; token: number }>): void {
    for (const r of refused) this.lose(r.sessionId, r.token);
  }

  /** Stops running a session here (if still the run admitted under `token`): the node evicts it. */
  private lose(sessionId: string, token: number | undefined): void {
    if (!this.held.has(sessionId) || this.fence.tokenOf(sessionId) !== token) return;
    this.held.delete(sessionId);
    this.fence.release(sessionId);
    for (const listener of this.lostListeners) listener(sessionId);
  }

  append(record: JournalRecord): Promise<void> {
    // A new session is held from its first record on; its lease row is created with token 1 in
    // the same transaction (journal/postgres.ts FENCED_COMMIT_SQL).
    if (record.sequence === 1 && record.type === "session.created" && !this.held.has(record.sessionId)) {
      this.held.set(record.sessionId, { records: [], head: newHead(record.sessionId) });
      this.fence.hold(record.sessionId, 1);
    }
    const token = this.fence.tokenOf(record.sessionId);
    return this.pg.append(record).then(
      () => {
        const h = this.held.get(record.sessionId);
        if (h === undefined || this.fence.tokenOf(record.sessionId) !== token) return;
        h.records.push(record);
        advanceHead(h.head, record);
      },
      (e: unknown) => {
        // The session's memory has moved past a record the database does not have (its batch
        // failed, or its lease was lost): stop running it; taken again, it is read afresh.
        this.lose(record.sessionId, token);
        throw e;
      },
    );
  }

  read(sessionId: string, after = 0, through = Number.MAX_SAFE_INTEGER): JournalRecord[] {
    const h = this.held.get(sessionId);
    if (h !== undefined) {
      // Sequences are gap-free from 1, so record n sits at index n - 1.
      const out = h.records.slice(Math.max(0, after), Math.max(0, Math.min(through, h.records.length)));
      this.pg.stats.rowsRead += out.length;
      return out;
    }
    throw new BrainRuntimeError("internal", `session ${sessionId} is not loaded on this node (a route did not place it first)`);
  }

  /** From the database (committed records of every node), by its partial index. */
  findMessage(sessionId: string, key: string): Promise<KeyedMessage | undefined> {
    return this.pg.findMessage(sessionId, key);
  }

  head(sessionId: string): SessionHead | undefined {
    const h = this.held.get(sessionId)?.head;
    return h === undefined || h.lastSequence === 0 ? undefined : { ...h };
  }

  openWork(): string[] {
    return this.recovering;
  }

  /** A page of every node's sessions, from the database (a session is written by its owner, so its head there is as committed). */
  listSessions(query: ListQuery): Promise<SessionPage> {
    return this.pg.listSessions(query);
  }

  /** One session's head from the database (a route's ownership check: does it exist at all). */
  loadHead(sessionId: string): Promise<SessionHead | undefined> {
    return this.pg.head(sessionId);
  }

  /** API keys and host registrations, as every node wrote them. */
  async loadCredentials(): Promise<void> {
    const [keys, hosts] = await Promise.all([this.pg.loadKeys(), this.pg.loadHosts()]);
    // Keys are never deleted and a revocation is for good: a read that began before this node's own
    // write of a key (created, revoked) committed neither loses the key nor brings the revoked one back.
    const read = new Map(keys.map((k) => [k.keyId, k]));
    for (const [keyId, mine] of this.keys) {
      const theirs = read.get(keyId);
      if (theirs === undefined || (mine.revokedAt !== undefined && theirs.revokedAt === undefined)) read.set(keyId, mine);
    }
    this.keys = read;
    // A registration being deleted does not come back from a read made before its DELETE committed.
    this.hosts = new Map(hosts.filter((h) => !this.deleting.has(h.hostId)).map((h) => [h.hostId, h]));
  }

  saveHost(row: HostRow): void {
    this.hosts.set(row.hostId, row);
    this.track(this.pg.saveHost(row));
  }

  /** Forgets a registration here at once; the row goes once the writes already made have settled (a registration in flight is not written after it). */
  deleteHost(hostId: string): void {
    this.hosts.delete(hostId);
    this.deleting.add(hostId);
    const before = [...this.writes];
    this.track(Promise.allSettled(before).then(() => this.pg.deleteHost(hostId)).finally(() => this.deleting.delete(hostId)));
  }

  loadHosts(): HostRow[] {
    return [...this.hosts.values()];
  }

  saveKey(row: KeyRow): void {
    this.keys.set(row.keyId, row);
    this.track(this.pg.saveKey(row));
  }

  loadKeys(): KeyRow[] {
    return [...this.keys.values()];
  }

  private track(p: Promise<unknown>): void {
    const t = p.catch((e) => this.logger.error("a key or host registration write to PostgreSQL failed; it is not retried", { error: messageOf(e) })).finally(() => this.writes.delete(t));
    this.writes.add(t);
  }

  async flush(): Promise<void> {
    await Promise.all([this.pg.flush(), ...this.writes]);
  }

  async close(): Promise<void> {
    await this.flush();
    await this.pg.close();
  }
}
