import type { ErrorInfo, JournalRecord, Session as SessionView, TerminalStatus } from "@aexhq/brain-protocol";

/**
 * One answer of a session: the end of one turn, read from the journal (`turn.completed` or
 * `turn.failed`). A `send()` starts a turn (cause `message`); a background tool's later result or
 * finish wakes the Agentloop into another turn of the same activation (cause `wake`), whose answer
 * no `send()` returns: `session.idle()`, `session.next()` and `for await (const a of session)` do.
 */
export interface TurnAnswer {
  /** The activation (one user message and the work it started); a wake turn keeps its message's. */
  readonly activation: number;
  /** `message`: the turn a message started; `wake`: a turn a background tool's observation started. */
  readonly cause: "message" | "wake";
  /** Journal sequence of the turn's end. */
  readonly sequence: number;
  readonly status: "completed" | "failed";
  /** The assistant's answer (completed turns). */
  readonly text?: string;
  /** Why the turn failed (failed turns): e.g. `interrupted` (retryable) or `cancelled`. */
  readonly error?: ErrorInfo;
}

/** One failed tool call of a turn, as `send(text, { failOnToolError: true })` reports it. */
export interface ToolFailure {
  readonly callId: string;
  readonly tool: string;
  readonly status: Exclude<TerminalStatus, "ok">;
  readonly error?: ErrorInfo;
  readonly message?: string;
}

/**
 * Reads answers out of journal records in order. It remembers the cause of the last turn start it
 * saw, so it must be fed from a turn boundary (a handle's position always is one).
 */
export class AnswerReader {
  private cause: TurnAnswer["cause"] = "message";

  /** The answer `r` is, if it ends a turn. */
  read(r: JournalRecord): TurnAnswer | undefined {
    if (r.type === "turn.started") this.cause = r.data.cause;
    else if (r.type === "turn.completed") return { activation: r.data.activation, cause: this.cause, sequence: r.sequence, status: "completed", text: r.data.text };
    else if (r.type === "turn.failed") return { activation: r.data.activation, cause: this.cause, sequence: r.sequence, status: "failed", error: r.data.error };
    return undefined;
  }
}

/**
 * Nothing runs in the session and nothing is about to: no turn open or due (the runtime reports a
 * wake that is about to start as `running`), no tool call open. A deleted session runs nothing.
 */
export function isQuiet(view: SessionView): boolean {
  return view.status === "deleted" || (view.status === "idle" && view.openCalls.length === 0);
}

/** Records after which the session may have become quiet: the view is worth reading again. */
export function mayQuiet(r: JournalRecord): boolean {
  return r.type === "turn.completed" || r.type === "turn.failed" || r.type === "tool.finished" || r.type === "session.deleted";
}

/**
 * The calls of `activation`'s message turn that failed before that turn answered, from the records
 * after its `message.user`; nested calls (origin set) are their caller's business. Also returns
 * whether the turn's end was among the records.
 */
export function failedCalls(records: JournalRecord[], activation: number): { failures: ToolFailure[]; ended: boolean } {
  const tools = new Map<string, string>();
  const failures: ToolFailure[] = [];
  for (const r of records) {
    if (r.type === "tool.call_started" && r.data.activation === activation && r.data.origin === undefined) tools.set(r.data.callId, r.data.tool);
    else if (r.type === "tool.finished" && r.data.status !== "ok" && tools.has(r.data.callId)) {
      const { callId, status, error, message } = r.data;
      failures.push({ callId, tool: tools.get(callId)!, status, ...(error !== undefined ? { error } : {}), ...(message !== undefined ? { message } : {}) });
    } else if ((r.type === "turn.completed" || r.type === "turn.failed") && r.data.activation === activation) return { failures, ended: true };
  }
  return { failures, ended: false };
}

/** One line per failure, for an error message: `lookup (ses_…:7) error not_found: no such record`. */
export function describeFailures(failures: ToolFailure[]): string {
  return failures.map((f) => `${f.tool} (${f.callId}) ${f.status}${f.error ? ` ${f.error.code}: ${f.error.message}` : f.message ? `: ${f.message}` : ""}`).join("; ");
}
