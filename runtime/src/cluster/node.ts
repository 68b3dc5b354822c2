import { LIMITS } from "@aexhq/brain-protocol";
import type { IncomingMessage, ServerResponse } from "node:http";
import { BrainRuntimeError } from "../errors.ts";
import type { SessionManager } from "../sessions/manager.ts";
import type { KeyRing } from "../credentials/keys.ts";
import type { HostRegistry } from "../hosts/registry.ts";
import { requestUrl } from "../http/path.ts";
import { sendError } from "../http/respond.ts";
import { FORWARDED_HEADER, ForwardFailed, buffered, forward } from "./forward.ts";
import type { Leases } from "./leases.ts";
import type { NodeJournal } from "./node-journal.ts";
import { messageOf } from "../logger.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../telemetry/metrics.ts";

/** Default lease time (BRAIN_LEASE_MS): how long a silent node keeps its sessions before others take them. */
export const DEFAULT_LEASE_MS = LIMITS.defaultLeaseMs;

/** Sessions taken over at once by one scan (the reader pool has 4 connections). */
const TAKEOVER_CONCURRENCY = 4;
/** How often a node sweeps the rows of long-dead nodes (Leases.forgetDead), and how long they are kept. */
const SWEEP_EVERY_MS = 60_000;
const DEAD_NODE_KEPT_MS = 60 * 60_000;

/** Wrong tokens re-read the keys at most this often. */
const REFRESH_GAP_MS = 250;

type Place = { here: true } | { here: false; url: string; owner: string };

/**
 * Whether a request may be passed to an owner again after the first one may have reached it: reads,
 * a message carrying an Idempotency-Key (its owner runs one key at most once), and an approval
 * decision (committed at most once per call: a second lands as `conflict` naming the first).
 */
function mayRepeat(req: IncomingMessage, path: string): boolean {
  if (req.method === "GET" || req.method === "HEAD") return true;
  // An approval decision is committed at most once per call: sent again, it lands or is `conflict` naming the first.
  if (req.method === "POST" && /\/calls\/[^/]+\/approval$/.test(path)) return true;
  return req.method === "POST" && /\/messages$/.test(path) && req.headers["idempotency-key"] !== undefined;
}

export interface ClusterParts {
  logger: Logger;
  journal: NodeJournal;
  leases: Leases;
  sessions: SessionManager;
  keys: KeyRing;
  registry: HostRegistry;
  /** Lease renewals and takeovers are counted here (GET /metrics). */
  metrics?: Metrics;
}

/**
 * One runtime node of several on one PostgreSQL database (issue 20). Each session is run by the
 * node holding its lease; this node:
 * - serves a session request itself when it holds the session, passes it to the owner when another
 *   live node holds it (`forward`), and takes the lease (raising its token) when nobody live does,
 *   then loads the session and recovers its open work (open calls `unknown`, never re-sent);
 * - renews its own lease every third of the lease time, and refreshes keys and host registrations;
 *   finding its lease expired (it was paused or cut off), it lets every session go without a write;
 * - takes over, every half lease, the sessions with open work whose owner's lease has expired.
 * Every write proves the lease in its own transaction (journal/postgres.ts), so a node that was
 * wrong about holding a session cannot write to it.
 */
export class ClusterNode {
  private placing = new Map<string, Promise<Place>>();
  /** Requests in progress per session served here: a session is let go only when none reads it. */
  private holding = new Map<string, Set<ServerResponse>>();
  /** Owner nodes' liveness, asked by forwards in progress. */
  private liveness = new Map<string, { at: number; alive: Promise<boolean> }>();
  private timers: NodeJS.Timeout[] = [];
  /** performance.now() of the last renewal that succeeded (sent before it, so on the safe side). */
  private renewedAt = 0;
  private url = "";
  private stopped = false;
  private takingOver: Promise<void> | undefined;
  private renewing: Promise<void> | undefined;
  /** The read of keys and hosts under way, and the one that begins next (shared by whoever waits for it). */
  private credentialRefresh: Promise<void> | undefined;
  private nextRefresh: Promise<void> | undefined;
  /** When the last read began. */
  private credentialsReadAt = -Infinity;
  private sweptAt = -Infinity;

  constructor(private parts: ClusterParts) {}

  get nodeId(): string {
    return this.parts.leases.nodeId;
  }

  /** Joins the cluster at `url`, takes over what dead nodes left open, and starts the beats. */
  async start(url: string): Promise<void> {
    this.url = url;
    const sent = performance.now();
    await this.parts.leases.join(url);
    this.renewedAt = sent;
    await this.takeOver();
    const leaseMs = this.parts.leases.leaseMs;
    const beat = setInterval(() => void this.beat(), Math.max(10, Math.floor(leaseMs / 3)));
    const scan = setInterval(() => void this.takeOver(), Math.max(10, Math.floor(leaseMs / 2)));
    beat.unref();
    scan.unref();
    this.timers.push(beat, scan);
  }

  /** Whether this node's own lease is surely still running, by its own clock. */
  private get fresh(): boolean {
    return performance.now() - this.renewedAt < this.parts.leases.leaseMs;
  }

  /** One renewal at a time, shared by the beat and by requests that find the lease not fresh. */
  private renewNow(): Promise<void> {
    return (this.renewing ??= this.renew().finally(() => (this.renewing = undefined)));
  }

  private async beat(): Promise<void> {
    if (this.stopped) return;
    await this.renewNow();
    await this.refreshCredentials().catch((e) => this.parts.logger.warn("reading keys and hosts failed; kept the last ones read", { error: messageOf(e) }));
  }

  private async renew(): Promise<void> {
    const sent = performance.now();
    try {
      if (await this.parts.leases.renew()) {
        this.renewedAt = sent;
        this.parts.metrics?.leaseRenewal("ok");
      } else {
        this.parts.metrics?.leaseRenewal("expired");
        // Paused or cut off past the lease: another node may run these sessions now.
        this.letGoOfAll("this node's lease expired");
        await this.parts.leases.join(this.url);
        this.renewedAt = sent;
      }
    } catch (e) {
      this.parts.metrics?.leaseRenewal("failed");
      this.parts.logger.warn("lease renewal failed", { error: messageOf(e) });
      if (!this.fresh) this.letGoOfAll("this node could not renew its lease");
    }
  }

  private letGoOfAll(why: string): void {
    const ids = this.parts.journal.releaseAll();
    for (const id of ids) {
      this.answerHeld(id, why);
      this.parts.sessions.evict(id);
    }
    if (ids.length > 0) this.parts.logger.warn(`${why}; let go of ${ids.length} session(s) without writing`, { sessions: ids.length });
  }

  /** A write found the session's lease taken: stop running it here, without writing. */
  lost(sessionId: string): void {
    this.answerHeld(sessionId, "another node holds its lease now");
    this.parts.sessions.evict(sessionId);
  }

  async refreshCredentials(): Promise<void> {
    await this.parts.journal.loadCredentials();
    await Promise.all([this.parts.keys.reload(), this.parts.registry.reload()]);
  }

  private takeOver(): Promise<void> {
    return (this.takingOver ??= (async () => {
      try {
        if (this.stopped) return;
        if (performance.now() - this.sweptAt > SWEEP_EVERY_MS) {
          this.sweptAt = performance.now();
          await this.parts.leases
            .forgetDead(Math.max(DEAD_NODE_KEPT_MS, 10 * this.parts.leases.leaseMs))
            .catch((e) => this.parts.logger.warn("sweeping dead nodes failed", { error: messageOf(e) }));
        }
        const orphans = (await this.parts.leases.orphaned()).map((o) => o.sessionId);
        // A few at a time: each is a lease update and a read of the session's records, mostly waiting
        // on the database, so a dead node's sessions come back together rather than one by one.
        let next = 0;
        const worker = async () => {
          while (next < orphans.length && !this.stopped) {
            const sessionId = orphans[next++]!;
            // Open work this node runs is its own (in flight); only what it does not hold is orphaned.
            if (this.parts.journal.holds(sessionId)) continue;
            await this.place(sessionId).catch((e) => this.parts.logger.warn("taking a session over failed; the next scan tries again", { sessionId, error: messageOf(e) }));
          }
        };
        await Promise.all(Array.from({ length: Math.min(TAKEOVER_CONCURRENCY, orphans.length) }, worker));
      } catch (e) {
        this.parts.logger.warn("looking for sessions to take over failed", { error: messageOf(e) });
      } finally {
        this.takingOver = undefined;
      }
    })());
  }

  /** Where a request for this session is served: here (the session is held and loaded), or at its owner. */
  place(id: string): Promise<Place> {
    // A take-over in progress holds the session before it has recovered it: a request that came
    // meanwhile waits for it (served at once, it would page the session in from its head and run an
    // idle loop over a turn the recovery is about to end; a verification run found that).
    const taking = this.placing.get(id);
    if (taking !== undefined) return taking;
    if (this.parts.journal.holds(id)) {
      if (this.fresh) return Promise.resolve({ here: true });
      // Held, but this node's own lease is not surely running (a slow renewal, a pause): renew it
      // rather than take the session again under it, which would evict the run in progress.
      return this.renewNow().then(() => (this.parts.journal.holds(id) && this.fresh ? { here: true } : this.place(id)));
    }
    const p = this.acquire(id).finally(() => this.placing.delete(id));
    this.placing.set(id, p);
    return p;
  }

  private async acquire(id: string): Promise<Place> {
    const { leases, journal, sessions } = this.parts;
    for (let attempt = 0; attempt < 3; attempt++) {
      const view = await leases.lookup(id);
      if (view !== undefined && view.owner !== this.nodeId && view.alive && view.url !== undefined) return { here: false, url: view.url, owner: view.owner };
      const token = await leases.acquire(id, view);
      if (token === undefined) {
        // No such session (the route answers 404), or another node moved first: look again.
        if (view === undefined && (await journal.head(id)) === undefined) return { here: true };
        continue;
      }
      // A stale run of this session (lost earlier) must not mix with the one loaded now.
      sessions.evict(id);
      journal.hold(id, token);
      this.parts.metrics?.takeover();
      try {
        const head = await journal.head(id);
        if (head !== undefined && !head.deleted && (head.openCalls > 0 || head.openModelRequests > 0 || head.turnOpen)) {
          await sessions.recover([id]);
        }
      } catch (e) {
        // Not recovered (the database failed, or the lease moved on meanwhile): let go of it, so the
        // next request takes it again and recovers it. Held without recovery, it would page in from
        // its head with an idle loop over the turn still open in the journal (a verification run
        // found the next message starting a turn over it).
        sessions.evict(id);
        journal.release(id);
        throw e;
      }
      return { here: true };
    }
    throw new BrainRuntimeError("unavailable", `session ${id} is changing hands between nodes; retry`, undefined, true);
  }

  /**
   * Places each request before the local routes see it: a session's routes are served by its owner,
   * listings are served here (from the database), and an unknown credential is looked up again
   * (it may be a key another node issued a moment ago).
   *
   * A request is passed to the owner once. It is sent again only where that cannot run it twice:
   * when no connection to the owner was ever made (an owner that died is waited for, up to the lease
   * time and a little more, until its lease runs out and this node takes over), or when sending it
   * again is harmless (a read, or a message with an Idempotency-Key, which the owner runs at most
   * once). A message without a key whose owner was lost after receiving it is answered 503
   * `unavailable`, saying its outcome is unknown.
   */
  async route(req: IncomingMessage, res: ServerResponse, local: (req: IncomingMessage) => Promise<void>): Promise<void> {
    let session: string | undefined;
    try {
      const url = requestUrl(req);
      const path = url.pathname.replace(/\/+$/, "") || "/";
      await this.knowCredential(req);
      const m = /^\/v1\/sessions\/([^/]+)/.exec(path);
      if (m) {
        let id: string;
        try {
          id = decodeURIComponent(m[1]!);
        } catch {
          return await local(req);
        }
        // A body is read before placing, so the request can be passed on, tried again, or served here.
        const request = req.method === "GET" || req.method === "HEAD" ? () => req : await buffered(req);
        const again = mayRepeat(req, path);
        let unreachableSince: number | undefined;
        for (;;) {
          const place = await this.place(id);
          if (place.here) break;
          if (req.headers[FORWARDED_HEADER] !== undefined) throw new BrainRuntimeError("unavailable", `session ${id} is changing hands between nodes; retry`, undefined, true);
          try {
            return await forward(request(), res, place.url, this.nodeId, { ownerLost: () => this.ownerLost(place.owner), everyMs: this.watchEveryMs });
          } catch (e) {
            if (!(e instanceof ForwardFailed)) throw e;
            if (e.delivered && !again) {
              throw new BrainRuntimeError("unavailable", `${e.message}: whether the request was carried out is unknown (the session's events tell); a message sent with an Idempotency-Key may be sent again safely`, undefined, true, { cause: e });
            }
            if (!e.delivered) {
              unreachableSince ??= performance.now();
              if (performance.now() - unreachableSince > this.parts.leases.leaseMs + 2_000) throw e;
            }
            await new Promise((r) => setTimeout(r, 100));
          }
        }
        session = id;
        this.hold(id, res);
        return await local(request());
      }
      // Listings (sessions, a host's placed sessions) page through the database's listing index themselves.
      // A host registered through another node a moment ago is read before its route answers 404.
      const host = req.method === "GET" ? /^\/v1\/hosts\/([^/]+)$/.exec(path) : null;
      if (host && !this.parts.registry.knows(host[1]!)) await this.refreshThrottled();
      await local(req);
    } catch (e) {
      if (!res.headersSent) sendError(res, e);
      else res.destroy();
    } finally {
      if (session !== undefined) this.done(session, res);
    }
  }

  /** How often a forward in progress asks whether the owner is still alive. */
  private get watchEveryMs(): number {
    return Math.max(50, Math.floor(this.parts.leases.leaseMs / 4));
  }

  /** Whether a node's lease ran out; forwards to one owner share one question per half watch interval. */
  private ownerLost(owner: string): Promise<boolean> {
    const now = performance.now();
    const known = this.liveness.get(owner);
    if (known !== undefined && now - known.at < this.watchEveryMs / 2) return known.alive.then((alive) => !alive);
    const alive = this.parts.leases.alive(owner);
    this.liveness.set(owner, { at: now, alive });
    alive.catch(() => this.liveness.delete(owner));
    return alive.then((a) => !a);
  }

  private hold(id: string, res: ServerResponse): void {
    let held = this.holding.get(id);
    if (held === undefined) this.holding.set(id, (held = new Set()));
    held.add(res);
  }

  private done(id: string, res: ServerResponse): void {
    const held = this.holding.get(id);
    held?.delete(res);
    if (held !== undefined && held.size > 0) return;
    this.holding.delete(id);
    // A session read once and not run here is not kept: its records are the database's.
    if (!this.parts.sessions.isResident(id)) this.parts.journal.release(id);
  }

  /**
   * This node stopped running a session (its lease was lost): every request it still holds on it
   * is answered now, not left waiting for a turn that will not end here. A response already begun
   * (an SSE stream) is ended; its reader resumes through another node.
   */
  private answerHeld(id: string, why: string): void {
    for (const res of this.holding.get(id) ?? []) {
      if (res.headersSent) res.destroy();
      else sendError(res, new BrainRuntimeError("unavailable", `this node stopped running session ${id} while serving the request (${why}); its outcome is unknown here: retry (a message sent again with the same Idempotency-Key runs at most once)`, undefined, true));
    }
  }

  /** A session the session layer stopped running (paged out, deleted): let go of it unless a request reads it. */
  released(id: string): void {
    if (!this.holding.has(id)) this.parts.journal.release(id);
  }

  /**
   * An unknown bearer token may be a key another node issued a moment ago: read the keys again
   * (at most once per REFRESH_GAP_MS however many wrong tokens arrive: they must not become queries).
   */
  private async knowCredential(req: IncomingMessage): Promise<void> {
    const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "");
    if (m) await this.knowToken(m[1]!.trim());
  }

  /** The same for a host's `register` frame: resolves once a token unknown here was looked up again. */
  async knowToken(token: string): Promise<void> {
    if (this.parts.keys.authenticate(token) === undefined) await this.refreshThrottled();
  }

  /**
   * Keys and hosts read again for a request that names one unknown here. The read it waits for
   * always begins after it arrived (a read already under way may predate the key it names), so a
   * key issued through another node works at once; reads are shared and begin at most once per
   * REFRESH_GAP_MS, so a burst of unknown names waits up to that long instead of becoming queries.
   */
  private refreshThrottled(): Promise<void> {
    return (this.nextRefresh ??= (async () => {
      try {
        // Not this request's read: it began before the request came. Its failure is its own waiters'.
        await this.credentialRefresh?.catch(() => undefined);
        const wait = this.credentialsReadAt + REFRESH_GAP_MS - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      } finally {
        // From here on a request that arrives needs a later read than this one.
        this.nextRefresh = undefined;
      }
      this.credentialsReadAt = performance.now();
      const read = (this.credentialRefresh = this.refreshCredentials());
      try {
        await read;
      } finally {
        if (this.credentialRefresh === read) this.credentialRefresh = undefined;
      }
    })());
  }

  /** A clean stop: the lease ends now, so the other nodes take this node's open sessions at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    await this.takingOver;
    // Before the lease ends (the settle is fenced by it): rows of calls ended outside a turn are
    // written exact, so the other nodes find no open work left to take over.
    await this.parts.journal.settle();
    // Not fatal: without it the others wait for the lease to run out instead.
    await this.parts.leases.leave().catch((e) => this.parts.logger.warn("ending this node's lease at stop failed; the other nodes take its sessions over when it runs out", { error: messageOf(e) }));
  }
}
