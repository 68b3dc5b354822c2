import type { Fence } from "../journal/postgres.ts";

type Refused = Array<{ sessionId: string; token: number }>;

/**
 * What this node proves with every write (issue 20's fencing, as one object): its node id, the run
 * it joined with (cluster/leases.ts sets it at every join), and the lease token it holds for each
 * session it runs (cluster/node-journal.ts sets it when it takes or creates a session). The
 * PostgreSQL store puts all three in every batch; records the database refuses are reported back
 * here, and the node journal, listening, stops running those sessions. Built before the store, so
 * the parts that share it are wired in one straight line.
 */
export class NodeFence implements Fence {
  private currentRun: string | undefined;
  private tokens = new Map<string, number>();
  private refusedListeners: Array<(refused: Refused) => void> = [];

  constructor(readonly nodeId: string) {}

  run(): string | undefined {
    return this.currentRun;
  }

  /** A new run of this node (Leases.join): every write of an earlier run is refused from now on. */
  joined(run: string): void {
    this.currentRun = run;
  }

  tokenOf(sessionId: string): number | undefined {
    return this.tokens.get(sessionId);
  }

  /** This node runs `sessionId` under `token` now (a lease just taken; 1 for a session it creates). */
  hold(sessionId: string, token: number): void {
    this.tokens.set(sessionId, token);
  }

  release(sessionId: string): void {
    this.tokens.delete(sessionId);
  }

  /** Lets go of every session; returns their ids. */
  releaseAll(): string[] {
    const ids = [...this.tokens.keys()];
    this.tokens.clear();
    return ids;
  }

  fenced(refused: Refused): void {
    for (const listener of this.refusedListeners) listener(refused);
  }

  /** Tells `listener` of the records the database refused (the session and the token they were admitted under). */
  onRefused(listener: (refused: Refused) => void): void {
    this.refusedListeners.push(listener);
  }
}
