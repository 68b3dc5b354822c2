import type { Placement, PlacedTool, TerminalStatus } from "@aexhq/brain-protocol";
import type { Environment } from "../environments/environment.ts";
import type { SessionState } from "../sessions/session.ts";
import { toErrorInfo } from "../errors.ts";
import { EmissionBudget } from "./budget.ts";
import { ToolCall } from "./call.ts";
import type { CommitKind } from "./call.ts";
import { armDeadline } from "./deadline.ts";

export interface CallRequest {
  modelCallId: string;
  tool: PlacedTool;
  input: unknown;
  deadlineAt: number | null;
}

export type CommitListener = (session: SessionState, call: ToolCall, kind: CommitKind, record: { sequence: number; status?: TerminalStatus }) => void;

/**
 * Starts tool calls: commits tool.call_started, then hands the call to its placement's
 * Environment exactly once, and owns the runtime-side terminal causes (deadline, cancel).
 */
export class Dispatcher {
  private calls = new Map<string, ToolCall>();
  private budgets = new Map<string, EmissionBudget>();
  private closing = false;

  constructor(
    private environments: Map<Placement["kind"], Environment>,
    private maxEmittedBytes: number,
    private onCommitted: CommitListener,
  ) {}

  environment(kind: Placement["kind"]): Environment | undefined {
    return this.environments.get(kind);
  }

  getCall(callId: string): ToolCall | undefined {
    return this.calls.get(callId);
  }

  budget(sessionId: string, activation: number): EmissionBudget {
    const key = `${sessionId}#${activation}`;
    let b = this.budgets.get(key);
    if (!b) this.budgets.set(key, (b = new EmissionBudget(this.maxEmittedBytes)));
    return b;
  }

  /** Admits every call's tool.call_started now (one group commit) and dispatches each after its commit. */
  start(session: SessionState, activation: number, requests: CallRequest[]): ToolCall[] {
    return requests.map((req) => {
      const { sequence, committed } = session.append("tool.call_started", {
        callId: `${session.id}:${session.nextSequence}`,
        tool: req.tool.contract.name,
        modelCallId: req.modelCallId,
        input: req.input as never,
        placement: req.tool.placement,
        activation,
        deadlineAt: req.deadlineAt,
      });
      const callId = `${session.id}:${sequence}`;
      const call = new ToolCall(
        { callId, sequence, activation, modelCallId: req.modelCallId, tool: req.tool, input: req.input, deadlineAt: req.deadlineAt },
        session,
        this.budget(session.id, activation),
        (c, kind, r) => this.onCommitted(session, c, kind, r),
      );
      this.calls.set(callId, call);
      committed.then(
        () => this.dispatch(call),
        () => void call.terminate("error", { error: { code: "internal", message: "tool.call_started was not committed" } }),
      );
      return call;
    });
  }

  private async dispatch(call: ToolCall): Promise<void> {
    if (this.closing || call.finished) return;
    const env = this.environments.get(call.info.tool.placement.kind);
    if (call.info.deadlineAt !== null) {
      call.disarm = armDeadline(call.info.deadlineAt, () => void call.terminate("timeout", { message: "the call's deadline passed" }));
    }
    try {
      if (!env) throw new Error(`no ${call.info.tool.placement.kind} environment`);
      const handle = await env.start(call.invocation(), call);
      call.handle = handle;
      // A cause that landed while the Environment was starting still has to stop it.
      if (call.finished && call.finishedCommitted && call.terminal !== "ok") handle.stop(call.terminal!);
    } catch (e) {
      await call.terminate("error", { error: toErrorInfo(e) });
    }
  }

  /** Cancels open calls; returns the ids this request ended (terminal ones keep their first cause). */
  async cancel(calls: ToolCall[], status: "cancelled" = "cancelled"): Promise<string[]> {
    const ended = await Promise.all(calls.map(async (c) => ((await c.terminate(status, { message: "cancelled by request" })) ? c.callId : undefined)));
    return ended.filter((x): x is string => x !== undefined);
  }

  openCalls(sessionId: string, activation?: number): ToolCall[] {
    return [...this.calls.values()].filter((c) => c.callId.startsWith(`${sessionId}:`) && !c.finished && (activation === undefined || c.info.activation === activation));
  }

  close(): void {
    this.closing = true;
    for (const c of this.calls.values()) c.disarm?.();
  }
}
