import type { SessionState } from "../journal/session.ts";
import type { Agentloop } from "../agentloop/loop.ts";
import type { ModelProvider } from "../models/provider.ts";
import type { CallDirectory } from "../dispatch/dispatcher.ts";
import type { ToolCall } from "../dispatch/call.ts";
import type { SessionCalls } from "../dispatch/session-calls.ts";
import { sessionOfCallId } from "../journal/call-id.ts";

/** A session running here: its journal state, its Agentloop, its calls and budgets, its model provider. */
export interface Resident {
  state: SessionState;
  loop: Agentloop;
  calls: SessionCalls;
  provider: ModelProvider;
}

/** Settled sessions kept in memory beyond those with work in flight (least recently used out). */
export const DEFAULT_RESIDENT_SESSIONS = 256;

/**
 * The sessions in memory, least recently touched first, and those being paged in. It decides
 * nothing about a session's life (sessions/manager.ts does): it keeps them, shares one page-in per
 * session, says which settled ones are beyond the limit, and finds a held call through its session
 * (the dispatcher's CallDirectory), so no map of calls lives outside the sessions.
 */
export class Residency implements CallDirectory {
  private resident = new Map<string, Resident>();
  /** Sessions being paged in: every request for one shares its page-in. */
  private arriving = new Map<string, Promise<Resident>>();

  constructor(readonly limit = DEFAULT_RESIDENT_SESSIONS) {}

  /** A resident session, without touching it. */
  get(id: string): Resident | undefined {
    return this.resident.get(id);
  }

  has(id: string): boolean {
    return this.resident.has(id);
  }

  get size(): number {
    return this.resident.size;
  }

  /** A resident session, now the most recently touched. */
  touch(id: string): Resident | undefined {
    const r = this.resident.get(id);
    if (r !== undefined) {
      this.resident.delete(id);
      this.resident.set(id, r);
    }
    return r;
  }

  add(r: Resident): void {
    this.resident.set(r.state.id, r);
  }

  /** Takes a session out of memory; returns it if it was resident. */
  remove(id: string): Resident | undefined {
    const r = this.resident.get(id);
    this.resident.delete(id);
    return r;
  }

  /** Pages a session in once however many ask at the same time: `load` runs for the first, the others share its answer. */
  arrive(id: string, load: () => Promise<Resident>): Promise<Resident> {
    let p = this.arriving.get(id);
    if (p === undefined) {
      p = load().finally(() => this.arriving.delete(id));
      this.arriving.set(id, p);
    }
    return p;
  }

  /** Settled sessions beyond the limit, least recently touched first (never `keep`, which a caller is about to use). */
  beyondLimit(settled: (r: Resident) => boolean, keep?: string): string[] {
    let excess = this.resident.size - this.limit;
    const out: string[] = [];
    for (const [id, r] of this.resident) {
      if (excess <= 0) break;
      if (id !== keep && settled(r)) {
        out.push(id);
        excess -= 1;
      }
    }
    return out;
  }

  values(): IterableIterator<Resident> {
    return this.resident.values();
  }

  /** A call held by its session (the call id names the session). */
  call(callId: string): ToolCall | undefined {
    // Only the session is read from the id (every frame of a call looks it up): a session holds
    // calls by their exact ids, so a malformed id is simply not found there.
    const session = sessionOfCallId(callId);
    return session === undefined ? undefined : this.resident.get(session)?.calls.get(callId);
  }

  *calls(): IterableIterator<ToolCall> {
    for (const r of this.resident.values()) yield* r.calls.values();
  }

  /** Calls and activation budgets held over every resident session (for tests and the bench). */
  get held(): { calls: number; budgets: number } {
    let calls = 0;
    let budgets = 0;
    for (const r of this.resident.values()) {
      calls += r.calls.size;
      budgets += r.calls.budgets;
    }
    return { calls, budgets };
  }
}
