import type { SessionState } from "../journal/session.ts";
import { EmissionBudget } from "./budget.ts";
import { ModelCallBudget } from "../models/budget.ts";
import type { CallAllowance, ToolCall } from "./call.ts";

/** Limits one activation shares between the Agentloop and every call it started. */
export interface Limits {
  maxEmittedBytes: number;
  maxModelCalls: number;
}

interface Allowance extends CallAllowance {
  /** Calls not yet forgotten that charge it. */
  live: number;
}

/**
 * One session's calls while it runs here: the calls it holds (open, or finished with the finish not
 * yet committed) and the budgets of its activations. It lives and goes with the session's residency,
 * so nothing outside a session keeps a map of calls: a call is found through its session
 * (journal/call-id.ts names the session in every call id).
 *
 * A call is forgotten once its tool.finished is committed (every earlier record of it is then
 * committed too): after that only the journal knows it. An activation's budgets go once no call
 * charges them and a later activation exists.
 */
export class SessionCalls {
  private calls = new Map<string, ToolCall>();
  private allowances = new Map<number, Allowance>();

  constructor(
    readonly session: SessionState,
    private limits: Limits,
  ) {}

  /** A call this session still holds. */
  get(callId: string): ToolCall | undefined {
    return this.calls.get(callId);
  }

  /** Number of calls held. */
  get size(): number {
    return this.calls.size;
  }

  /** Number of activations whose budgets are held. */
  get budgets(): number {
    return this.allowances.size;
  }

  values(): IterableIterator<ToolCall> {
    return this.calls.values();
  }

  /** Calls not finished, of one activation or of all. */
  open(activation?: number): ToolCall[] {
    const out: ToolCall[] = [];
    for (const c of this.calls.values()) if (!c.finished && (activation === undefined || c.info.activation === activation)) out.push(c);
    return out;
  }

  /** The activation's budgets (the Agentloop's own model calls charge them too). */
  allowance(activation: number): CallAllowance {
    let a = this.allowances.get(activation);
    if (a === undefined) {
      // A new activation: earlier ones nobody charges any more are done for good.
      for (const [n, old] of this.allowances) if (n < activation && old.live === 0) this.allowances.delete(n);
      this.allowances.set(activation, (a = { budget: new EmissionBudget(this.limits.maxEmittedBytes), models: new ModelCallBudget(this.limits.maxModelCalls), live: 0 }));
    }
    return a;
  }

  /** Holds a call just started; it charges its activation's budgets until it is forgotten. */
  add(call: ToolCall): void {
    this.calls.set(call.callId, call);
    (this.allowance(call.info.activation) as Allowance).live += 1;
  }

  /** Drops a finished call (its tool.finished committed), or one let go of without an end (`abandon`), and an old activation's budgets if nobody charges them. */
  forget(call: ToolCall): void {
    if (this.calls.get(call.callId) !== call) return;
    this.calls.delete(call.callId);
    const a = this.allowances.get(call.info.activation);
    if (a === undefined) return;
    a.live -= 1;
    if (a.live === 0 && (call.info.activation < this.session.activation || this.session.deletedAdmitted)) this.allowances.delete(call.info.activation);
  }
}
