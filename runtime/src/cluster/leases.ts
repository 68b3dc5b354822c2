import { randomBytes } from "node:crypto";
import type pg from "pg";
import { MANAGED_HOST_PREFIX } from "../hosts/registry.ts";
import type { NodeFence } from "./fence.ts";

/** Where a session lives now, by its lease row and its owner node's liveness (the database's clock). */
export interface LeaseView {
  owner: string;
  token: number;
  /** The owner node's HTTP URL, as it registered it. */
  url: string | undefined;
  /** The owner node's lease has not expired. */
  alive: boolean;
}

/**
 * A node's side of the lease tables (journal/postgres.ts migration 2). One row per node, renewed
 * every third of the lease time, stands for all of the node's session leases: one UPDATE a beat, not
 * one per session. Every time is the database's (`clock_timestamp()`), so the nodes' clocks may differ.
 * A session changes hands only by raising its token (`acquire`), which the old owner's next insert
 * fails to match (journal/postgres.ts FENCED_COMMIT_SQL); the takeover first locks the old owner's
 * node row, which every write of that node holds while it runs, so no write in flight outlives it.
 */
export class Leases {
  /** This process's run as the node, new at every join: the node row's `run`, which its writes must match. */
  run: string | undefined;

  constructor(
    private pool: pg.Pool,
    readonly nodeId: string,
    readonly leaseMs: number,
    /** Told of every new run, which the node's writes must prove (cluster/fence.ts). */
    private fence?: NodeFence,
  ) {}

  /** Starts (or restarts) this node's lease and says where it is reached. */
  async join(url: string): Promise<void> {
    // A new run fences off every write of the previous one: this process's own from before it let go
    // of its sessions, or an earlier process's with the same node id (a restart).
    const run = randomBytes(9).toString("base64url");
    await this.pool.query(
      `INSERT INTO nodes (node_id, url, expires_at, run) VALUES ($1, $2, clock_timestamp() + $3 * interval '1 millisecond', $4)
       ON CONFLICT (node_id) DO UPDATE SET url = EXCLUDED.url, expires_at = EXCLUDED.expires_at, run = EXCLUDED.run`,
      [this.nodeId, url, this.leaseMs, run],
    );
    this.run = run;
    this.fence?.joined(run);
  }

  /**
   * Extends this node's lease; false if it had already expired (the node was paused or cut off past
   * its lease) or another process joined with this node id since: then every lease it held may
   * have been taken, and it must let all its sessions go.
   */
  async renew(): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      "UPDATE nodes SET expires_at = clock_timestamp() + $2 * interval '1 millisecond' WHERE node_id = $1 AND run = $3 AND expires_at > clock_timestamp()",
      [this.nodeId, this.leaseMs, this.run ?? ""],
    );
    return rowCount === 1;
  }

  /** A clean stop: the lease ends now, so other nodes take this node's sessions at once. */
  async leave(): Promise<void> {
    await this.pool.query("UPDATE nodes SET expires_at = clock_timestamp() - interval '1 millisecond' WHERE node_id = $1", [this.nodeId]);
  }

  /**
   * Removes the rows of nodes whose lease ran out more than `deadForMs` ago, and their host links.
   * A node started without BRAIN_NODE_ID gets a new random id at every start, so without this the
   * table would keep a row per start for good. Their sessions' leases stay: a lease whose owner has
   * no row is a dead node's (lookup, acquire), and a node that comes back after being swept finds
   * its renewal refused, lets its sessions go and joins again, as after any expiry.
   */
  async forgetDead(deadForMs: number): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      `WITH gone AS (DELETE FROM nodes WHERE node_id <> $1 AND expires_at < clock_timestamp() - $2 * interval '1 millisecond' RETURNING node_id),
       links AS (DELETE FROM host_links WHERE node_id IN (SELECT node_id FROM gone) RETURNING host_id),
       managed AS (DELETE FROM hosts WHERE starts_with(host_id, $3) AND host_id IN (SELECT host_id FROM links))
       SELECT count(*)::int AS n FROM gone`,
      [this.nodeId, deadForMs, MANAGED_HOST_PREFIX],
    );
    return rows[0]?.n ?? 0;
  }

  /** Whether a node's lease is running now (the database's clock); false for a node without a row. */
  async alive(nodeId: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ alive: boolean }>("SELECT expires_at > clock_timestamp() AS alive FROM nodes WHERE node_id = $1", [nodeId]);
    return rows[0]?.alive === true;
  }

  async lookup(sessionId: string): Promise<LeaseView | undefined> {
    const { rows } = await this.pool.query<{ owner: string; token: string; url: string | null; alive: boolean | null }>(
      `SELECT l.owner, l.token, n.url, n.expires_at > clock_timestamp() AS alive
         FROM leases l LEFT JOIN nodes n ON n.node_id = l.owner WHERE l.session_id = $1`,
      [sessionId],
    );
    const r = rows[0];
    return r === undefined ? undefined : { owner: r.owner, token: Number(r.token), url: r.url ?? undefined, alive: r.alive === true };
  }

  /**
   * Takes the session's lease for this node if it is still at `seen` (the token last looked up;
   * undefined: no lease row yet, for a session written before leases existed): the new token, or
   * undefined if another node moved first. Never takes a lease from a live node other than this one.
   */
  async acquire(sessionId: string, seen: LeaseView | undefined): Promise<number | undefined> {
    if (seen === undefined) {
      const { rows } = await this.pool.query<{ token: string }>(
        "INSERT INTO leases (session_id, owner, token) SELECT $1, $2, 1 WHERE EXISTS (SELECT 1 FROM sessions WHERE session_id = $1) ON CONFLICT (session_id) DO NOTHING RETURNING token",
        [sessionId, this.nodeId],
      );
      return rows[0] === undefined ? undefined : Number(rows[0].token);
    }
    // The owner's node row is locked FOR UPDATE first, whoever it is (this node's own earlier run
    // included): the lock waits for that node's writes in flight, which hold it FOR KEY SHARE, and
    // its liveness is read after them. The aggregate makes the lock run in every case.
    const { rows } = await this.pool.query<{ token: string }>(
      `WITH owner AS (
         SELECT n.expires_at > clock_timestamp() AS alive FROM nodes n
          WHERE n.node_id = (SELECT owner FROM leases WHERE session_id = $1) FOR UPDATE),
       live AS (SELECT count(*) FILTER (WHERE alive) AS n FROM owner)
       UPDATE leases l SET owner = $2, token = l.token + 1 FROM live
        WHERE l.session_id = $1 AND l.token = $3 AND (l.owner = $2 OR live.n = 0)
        RETURNING l.token`,
      [sessionId, this.nodeId, seen.token],
    );
    return rows[0] === undefined ? undefined : Number(rows[0].token);
  }

  /**
   * Sessions with open work whose owner's lease has expired (a dead node's), and those leased to this
   * node id (an earlier process with the same BRAIN_NODE_ID that died before its lease ran out): the
   * caller takes over the ones it does not run.
   */
  async orphaned(): Promise<Array<{ sessionId: string; view: LeaseView }>> {
    const { rows } = await this.pool.query<{ session_id: string; owner: string; token: string }>(
      `SELECT s.session_id, l.owner, l.token FROM sessions s JOIN leases l USING (session_id)
        WHERE NOT s.deleted AND (s.open_calls > 0 OR s.open_model_requests > 0 OR s.turn_open)
          AND (l.owner = $1 OR NOT EXISTS (SELECT 1 FROM nodes n WHERE n.node_id = l.owner AND n.expires_at > clock_timestamp()))
        ORDER BY s.session_id`,
      [this.nodeId],
    );
    return rows.map((r) => ({ sessionId: r.session_id, view: { owner: r.owner, token: Number(r.token), url: undefined, alive: false } }));
  }
}
