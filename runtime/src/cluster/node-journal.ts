import type { JournalRecord } from "@aexhq/brain-protocol";
import type { SessionHead } from "../journal/head.ts";
import type { PostgresStore } from "../journal/postgres.ts";
import type { CommitHook, CommitObserver, HostRow, JournalStore, KeyRow, KeyedMessage, ListQuery, SessionPage, StoreStats } from "../journal/store.ts";
import type { NodeFence } from "./fence.ts";
import { messageOf, stderrLogger } from "../logger.ts";
import type { Logger } from "../logger.ts";

/**
 * The journal as one node of several sees it: the PostgreSQL store, with what a node adds.
 * - The sessions this node holds a lease on (`hold`, after `acquire`): their records are written
 *   fenced by the held tokens (cluster/fence.ts). Nothing of them is kept here but their ids; reads
 *   go to the database, like every other store's (a held session's head is the store's cached one).
 * - API keys and host registrations (`loadCredentials`), refreshed every lease beat and when a
 *   request names one unknown here; writes go through at once.
 * Listing is a page from the database's listing index (`listSessions`), every node's sessions, as committed.
 */
export class NodeJournal implements JournalStore {
  readonly kind = "postgres" as const;
  private held = new Set<string>();
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
    // The session's memory has moved past a record the database does not have (its batch failed,
    // or its lease was lost): stop running it; taken again, it is read afresh.
    pg.failed = (sessionId, token) => this.lose(sessionId, token);
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

  /**
   * Holds a session whose lease this node just took with `token`. Nothing is read: its head comes
   * from the database when asked (another node may have written it since this node last did).
   */
  hold(sessionId: string, token: number): void {
    this.pg.forgetHead(sessionId);
    this.held.add(sessionId);
    this.fence.hold(sessionId, token);
  }

  /** Lets go of a session (paged out, deleted, or lost to another node). */
  release(sessionId: string): void {
    this.held.delete(sessionId);
    this.fence.release(sessionId);
    this.pg.forgetHead(sessionId);
  }

  /** Lets go of every session (this node's own lease expired). */
  releaseAll(): string[] {
    const ids = [...this.held];
    for (const id of ids) this.pg.forgetHead(id);
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
    this.release(sessionId);
    for (const listener of this.lostListeners) listener(sessionId);
  }

  observeCommits(observer: CommitObserver): void {
    this.pg.observer = observer;
  }

  append(record: JournalRecord, onCommit?: CommitHook): Promise<JournalRecord> {
    // A new session is held from its first record on; its lease row is created with token 1 in
    // the same transaction (journal/postgres.ts FENCED_COMMIT_SQL).
    if (record.sequence === 1 && record.type === "session.created" && !this.held.has(record.sessionId)) {
      this.held.add(record.sessionId);
      this.fence.hold(record.sessionId, 1);
    }
    // A failure is told to `lose` by the store (its `failed`, set above), with the token the record
    // was admitted under: no promise chained on every append.
    return this.pg.append(record, onCommit);
  }

  /** Committed records, from the database (any node's session: history is immutable once committed). */
  read(sessionId: string, after?: number, through?: number): Promise<JournalRecord[]> {
    return this.pg.read(sessionId, after, through);
  }

  /** From the database (committed records of every node), by its partial index. */
  findMessage(sessionId: string, key: string): Promise<KeyedMessage | undefined> {
    return this.pg.findMessage(sessionId, key);
  }

  /** A held session's head as this node committed it (cached by the store), any other's from the database. */
  head(sessionId: string): Promise<SessionHead | undefined> {
    if (!this.held.has(sessionId)) this.pg.forgetHead(sessionId);
    return this.pg.head(sessionId);
  }

  async openWork(): Promise<string[]> {
    return this.recovering;
  }

  /** A page of every node's sessions, from the database (a session is written by its owner, so its head there is as committed). */
  listSessions(query: ListQuery): Promise<SessionPage> {
    return this.pg.listSessions(query);
  }

  /** Every node's open sessions of the key, from the database (a key's sessions-open limit holds across nodes). */
  countOpenSessions(owner: string): Promise<number> {
    return this.pg.countOpenSessions(owner);
  }

  /** From the database: a session is written by the node holding its lease, which asks when it pages the session in. */
  journalBytes(sessionId: string, through: number): Promise<number> {
    return this.pg.journalBytes(sessionId, through);
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

  saveHost(row: HostRow): Promise<void> {
    this.hosts.set(row.hostId, row);
    return this.track(this.pg.saveHost(row));
  }

  /** Forgets a registration here at once; the row goes once the writes already made have settled (a registration in flight is not written after it). */
  deleteHost(hostId: string): Promise<void> {
    this.hosts.delete(hostId);
    this.deleting.add(hostId);
    const before = [...this.writes];
    return this.track(Promise.allSettled(before).then(() => this.pg.deleteHost(hostId)).finally(() => this.deleting.delete(hostId)));
  }

  /** As last read (loadCredentials) and written here. */
  async loadHosts(): Promise<HostRow[]> {
    return [...this.hosts.values()];
  }

  saveKey(row: KeyRow): Promise<void> {
    this.keys.set(row.keyId, row);
    return this.track(this.pg.saveKey(row));
  }

  /** As last read (loadCredentials) and written here. */
  async loadKeys(): Promise<KeyRow[]> {
    return [...this.keys.values()];
  }

  /** A registry write: flush and close wait for it; the caller that awaits it sees its failure. */
  private track(p: Promise<unknown>): Promise<void> {
    const t: Promise<void> = p.then(
      () => undefined,
      (e: unknown) => {
        this.logger.error("a key or host registration write to PostgreSQL failed; it is not retried", { error: messageOf(e) });
        throw e;
      },
    );
    const settled = t.catch(() => {
      // Handled: logged above, and rejected to whoever awaits the write.
    }).finally(() => this.writes.delete(settled));
    this.writes.add(settled);
    return t;
  }

  async flush(): Promise<void> {
    await Promise.all([this.pg.flush(), ...this.writes]);
  }

  /** Makes exact the session rows left saying "open work" (PostgresStore.settleAll): at a clean stop, while this node's lease still proves its writes. */
  settle(): Promise<void> {
    return this.pg.settleAll();
  }

  async close(): Promise<void> {
    await this.flush();
    await this.pg.close();
  }
}
