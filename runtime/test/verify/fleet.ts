// The runtime processes a verification run injects faults into: one node on a SQLite data folder
// (restarted on the same folder), or N nodes on one PostgreSQL database (restarted under a new node
// id or their old one). Real subprocesses (`brain serve`), killed with SIGKILL and paused with SIGSTOP.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freshDatabase, kill9, queryRows, startNode } from "../helpers/nodes.ts";
import type { NodeProcess } from "../helpers/nodes.ts";
import { startPgCluster } from "../helpers/pg-cluster.ts";
import type { PgCluster } from "../helpers/pg-cluster.ts";

/** One node position: the process running there now (undefined while it is dead), and all it ran. */
export interface Slot {
  index: number;
  nodeId: string;
  node: NodeProcess | undefined;
  past: Array<{ nodeId: string; node: NodeProcess }>;
}

export interface Fleet {
  readonly kind: "sqlite" | "postgres";
  readonly slots: Slot[];
  /** The PostgreSQL cluster (postgres fleets only), for its restart fault. */
  readonly cluster: PgCluster | undefined;
  live(): Slot[];
  kill(slot: Slot): Promise<void>;
  /** Starts the slot's node again: `new id` (PostgreSQL) is a new node; `same id` takes its old id back. */
  restart(slot: Slot, how: "new id" | "same id"): Promise<void>;
  /** The live node owning most of `sessionIds` (PostgreSQL leases), else any live node. */
  ownerOf(sessionIds: string[], fallback: () => Slot): Promise<Slot>;
  stop(): Promise<void>;
}

export async function startFleet(opts: { nodes: number; token: string; leaseMs: number; seed: number }): Promise<Fleet> {
  const env = { BRAIN_LEASE_MS: String(opts.leaseMs), BRAIN_HOST_TIMEOUT_MS: "60000" };
  let generation = 0;
  const start = async (slot: Slot, nodeId: string, where: { database: string; dataDir?: string }) => {
    const node = await startNode(where.database, opts.token, { ...env, BRAIN_NODE_ID: nodeId, ...(where.dataDir ? { BRAIN_DATA_DIR: where.dataDir } : {}) });
    slot.node = node;
    slot.nodeId = nodeId;
    slot.past.push({ nodeId, node });
  };
  const newSlot = (index: number): Slot => ({ index, nodeId: "", node: undefined, past: [] });

  if (opts.nodes === 0) {
    // One node: its SQLite journal and registry live in a data folder that outlives each process.
    const dataDir = mkdtempSync(join(tmpdir(), "brain-verify-"));
    const slot = newSlot(0);
    await start(slot, "solo", { database: "sqlite", dataDir });
    return {
      kind: "sqlite",
      slots: [slot],
      cluster: undefined,
      live: () => (slot.node === undefined ? [] : [slot]),
      async kill(s) {
        if (s.node !== undefined) await kill9(s.node.child);
        s.node = undefined;
      },
      restart: (s) => start(s, "solo", { database: "sqlite", dataDir }),
      ownerOf: async () => slot,
      async stop() {
        if (slot.node !== undefined) await kill9(slot.node.child);
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }

  const cluster = await startPgCluster();
  const database = await freshDatabase(cluster.url, `verify_${opts.seed}_${process.pid}`);
  const slots = Array.from({ length: opts.nodes }, (_, i) => newSlot(i));
  await Promise.all(slots.map((s) => start(s, `n${s.index}-g0`, { database })));
  const live = () => slots.filter((s) => s.node !== undefined);
  return {
    kind: "postgres",
    slots,
    cluster,
    live,
    async kill(s) {
      if (s.node !== undefined) await kill9(s.node.child);
      s.node = undefined;
    },
    restart: (s, how) => start(s, how === "new id" ? `n${s.index}-g${++generation}` : s.nodeId, { database }),
    async ownerOf(sessionIds, fallback) {
      const owners = await queryRows(database, "SELECT owner, count(*)::int AS n FROM leases WHERE session_id = ANY($1) GROUP BY owner ORDER BY n DESC, owner", [sessionIds]).catch(() => []);
      const byId = new Map(live().map((s) => [s.nodeId, s]));
      return owners.map((o) => byId.get(o.owner)).find((s) => s !== undefined) ?? fallback();
    },
    async stop() {
      for (const s of slots) if (s.node !== undefined) await kill9(s.node.child);
      await cluster.stop();
    },
  };
}
