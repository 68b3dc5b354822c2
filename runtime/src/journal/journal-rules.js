// @ts-check
/**
 * The journal's rules, written once for the runtime and the /ui page: what is open (calls, calls
 * awaiting approval, the turn), what is an observation (a record that wakes an idle Agentloop), and
 * which turn of its activation a turn is and what woke it.
 *
 * Plain JavaScript with JSDoc types, no imports, no DOM and no Node, so it runs unchanged in both:
 * the runtime imports it (journal/session.ts: SessionState keeps one `JournalRules` per session)
 * and /ui serves this very file as /ui/assets/journal-rules.js to the page (ui/routes.ts), whose
 * timeline folds the same records with it (docs/decisions/ui.md). runtime/test/journal-rules.test.ts
 * holds the two to the same answers.
 */

/**
 * What the rules read of a committed record (a JournalRecord of the contract).
 * @typedef {{ sequence: number, type: string, data?: any }} RuleRecord
 */

/**
 * An observation: something the model has not been told yet that wakes an idle Agentloop. `what` is
 * "result" (a tool.result), "finish" (a call finishing `ok` without any result), or the status of a
 * call that ended otherwise ("error", "timeout", "cancelled", "unknown").
 * @typedef {{ sequence: number, callId: string, what: string }} Observation
 */

/**
 * A turn as turn.started begins it: its activation, which of that activation's turns it is (1: the
 * message's own; each later one a wake), and for a wake, what woke it (the first observations not
 * fed to the model yet, and how many more there were).
 * @typedef {{ activation: number, index: number, wake: boolean, wokenBy: Observation[], more: number }} TurnStart
 */

/** Observations kept to name what woke a turn; beyond these only their number is kept (the runtime's memory stays constant). */
const KEPT = 8;

export class JournalRules {
  /** Open calls: a tool.call_started without its tool.finished. @type {Set<string>} */
  openCalls = new Set();
  /** Open calls awaiting a person: a tool.call_started with `approval`, no tool.approval_decided and no end yet. @type {Set<string>} */
  pendingApprovals = new Set();
  /** Open calls with a committed tool.result. @type {Set<string>} */
  withResult = new Set();
  /**
   * Open nested calls (ctx.environments.call: a tool.call_started with `origin`): the model did not
   * ask for them, so their results are no observation of the Agentloop's. Made at the first one
   * (most sessions have none; the runtime keeps one JournalRules per resident session).
   * @type {Set<string> | undefined}
   */
  nested = undefined;
  /**
   * Sequence of the latest observation: a tool.result of a call the model asked for, or its
   * tool.finished when that tells the model something new (not `ok`, or `ok` without any result).
   * The Agentloop compares it with what it fed the model last.
   */
  lastObservation = 0;
  /** Whether a turn is open: a turn.started without its turn.completed / turn.failed. */
  turnOpen = false;
  /** The latest message.user's activation (0 before the first). */
  activation = 0;
  /** Turns started in the latest activation so far. */
  turns = 0;
  /** Observations after what the Agentloop's latest model.request read (its `conversation.through`), the first KEPT of them. @type {Observation[]} */
  unfed = [];
  /** How many observations are unfed beyond `unfed`. */
  unfedMore = 0;

  /**
   * Folds one committed record (records in journal order). For a turn.started, answers the turn it begins.
   * @param {RuleRecord} r
   * @returns {TurnStart | undefined}
   */
  observe(r) {
    const d = r.data ?? {};
    switch (r.type) {
      case "message.user":
        this.activation = d.activation;
        this.turns = 0;
        return undefined;
      case "turn.started": {
        this.turnOpen = true;
        if (d.activation !== this.activation) {
          this.activation = d.activation;
          this.turns = 0;
        }
        this.turns += 1;
        const wake = d.cause === "wake";
        return { activation: d.activation, index: this.turns, wake, wokenBy: wake ? [...this.unfed] : [], more: wake ? this.unfedMore : 0 };
      }
      case "turn.completed":
      case "turn.failed":
        this.turnOpen = false;
        return undefined;
      case "model.request": {
        // The Agentloop's request reads the journal through `conversation.through` (older journals: everything before it).
        if (d.origin !== undefined) return undefined;
        const through = d.conversation?.through ?? r.sequence - 1;
        if (through >= this.lastObservation) {
          this.unfed = [];
          this.unfedMore = 0;
        } else this.unfed = this.unfed.filter((o) => o.sequence > through); // those beyond KEPT are later still: unfed
        return undefined;
      }
      case "tool.call_started":
        this.openCalls.add(d.callId);
        if (d.origin !== undefined) (this.nested ??= new Set()).add(d.callId);
        if (d.approval !== undefined) this.pendingApprovals.add(d.callId);
        return undefined;
      case "tool.approval_decided":
        this.pendingApprovals.delete(d.callId);
        return undefined;
      case "tool.result":
        this.withResult.add(d.callId);
        if (!this.nested?.has(d.callId)) this.observed({ sequence: r.sequence, callId: d.callId, what: "result" });
        return undefined;
      case "tool.finished": {
        const nested = this.nested?.delete(d.callId) === true;
        if (!nested && (d.status !== "ok" || !this.withResult.has(d.callId))) this.observed({ sequence: r.sequence, callId: d.callId, what: d.status === "ok" ? "finish" : d.status });
        this.openCalls.delete(d.callId);
        this.pendingApprovals.delete(d.callId);
        this.withResult.delete(d.callId);
        return undefined;
      }
      default:
        return undefined;
    }
  }

  /** @param {Observation} o */
  observed(o) {
    this.lastObservation = o.sequence;
    if (this.unfed.length < KEPT) this.unfed.push(o);
    else this.unfedMore += 1;
  }
}

/**
 * What woke a turn, in words: "woken by lookup's result", "woken by slow ending unknown and 2 more".
 * `toolOf` names a call's tool (the page knows it from the call's tool.call_started).
 * @param {TurnStart} turn
 * @param {(callId: string) => string} toolOf
 * @returns {string}
 */
export function wokenByText(turn, toolOf) {
  const seen = turn.wokenBy;
  if (seen.length === 0) return "woken";
  /** @param {Observation} o */
  const one = (o) => (o.what === "result" ? `${toolOf(o.callId)}'s result` : o.what === "finish" ? `${toolOf(o.callId)} finishing without a result` : `${toolOf(o.callId)} ending ${o.what}`);
  const rest = seen.length - 2 + turn.more;
  return `woken by ${seen.slice(0, 2).map(one).join(" and ")}${rest > 0 ? ` and ${rest} more` : ""}`;
}
