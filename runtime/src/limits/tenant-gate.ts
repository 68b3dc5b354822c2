import type { KeyLimits } from "@aexhq/brain-protocol";
import { limitExceeded } from "./key-limits.ts";
import { RequestRate } from "./request-rate.ts";

/** Where the gate finds the limits of a key (credentials/keys.ts KeyRing): undefined for the operator. */
export interface LimitsSource {
  limitsOf(owner: string | undefined): KeyLimits | undefined;
}

/** What the gate counts in the journal (the store: every node's sessions on PostgreSQL). */
export interface OpenSessionCount {
  countOpenSessions(owner: string): Promise<number>;
}

/**
 * The HTTP side of tenant limits (issue 32): a key's request rate, its sessions open and its SSE
 * streams, each refused with `limit_exceeded` (429 + Retry-After, http/respond.ts). The operator
 * (no owner) is never limited. Calls in flight are the dispatcher's to count, journal bytes the
 * session's (dispatch/, journal/session.ts).
 */
export class TenantGate {
  private rate = new RequestRate();
  /** Sessions being created here and not committed yet, per key: two concurrent creations both count. */
  private creating = new Map<string, number>();

  constructor(
    private limits: LimitsSource,
    private store: OpenSessionCount,
  ) {}

  /** One request of `owner`: its token, or `limit_exceeded` with the wait. */
  request(owner: string | undefined): void {
    const perSecond = this.limits.limitsOf(owner)?.requestsPerSecond;
    if (owner !== undefined && perSecond !== undefined) this.rate.take(owner, perSecond);
  }

  /**
   * Runs `create` if `owner` has fewer sessions open than its limit, counting the sessions the
   * journal holds (all nodes') and those being created here. Two nodes creating a key's last
   * session at the same moment can both pass (documented: the count is as of the journal's last commits).
   */
  async session<T>(owner: string | undefined, create: () => Promise<T>): Promise<T> {
    const max = this.limits.limitsOf(owner)?.sessions;
    if (owner === undefined || max === undefined) return create();
    this.creating.set(owner, (this.creating.get(owner) ?? 0) + 1);
    try {
      const open = (await this.store.countOpenSessions(owner)) + (this.creating.get(owner) ?? 1) - 1;
      if (open >= max) throw limitExceeded("sessions", max, open, "session not created");
      return await create();
    } finally {
      const n = (this.creating.get(owner) ?? 1) - 1;
      if (n === 0) this.creating.delete(owner);
      else this.creating.set(owner, n);
    }
  }

  /** A new SSE stream of `owner`, which holds `open` streams on this node now. */
  stream(owner: string | undefined, open: number): void {
    const max = this.limits.limitsOf(owner)?.streams;
    if (owner !== undefined && max !== undefined && open >= max) throw limitExceeded("streams", max, open, "event stream not opened");
  }

  /** Forgets what a revoked key left (its rate bucket). */
  forget(owner: string): void {
    this.rate.forget(owner);
  }
}
