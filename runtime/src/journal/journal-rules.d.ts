/**
 * What woke a turn, in words: "woken by lookup's result", "woken by slow ending unknown and 2 more".
 * `toolOf` names a call's tool (the page knows it from the call's tool.call_started).
 * @param {TurnStart} turn
 * @param {(callId: string) => string} toolOf
 * @returns {string}
 */
export function wokenByText(turn: TurnStart, toolOf: (callId: string) => string): string;
export class JournalRules {
    /** Open calls: a tool.call_started without its tool.finished. @type {Set<string>} */
    openCalls: Set<string>;
    /** Open calls awaiting a person: a tool.call_started with `approval`, no tool.approval_decided and no end yet. @type {Set<string>} */
    pendingApprovals: Set<string>;
    /** Open calls with a committed tool.result. @type {Set<string>} */
    withResult: Set<string>;
    /**
     * Open nested calls (ctx.environments.call: a tool.call_started with `origin`): the model did not
     * ask for them, so their results are no observation of the Agentloop's. Made at the first one
     * (most sessions have none; the runtime keeps one JournalRules per resident session).
     * @type {Set<string> | undefined}
     */
    nested: Set<string> | undefined;
    /**
     * Sequence of the latest observation: a tool.result of a call the model asked for, or its
     * tool.finished when that tells the model something new (not `ok`, or `ok` without any result).
     * The Agentloop compares it with what it fed the model last.
     */
    lastObservation: number;
    /** Whether a turn is open: a turn.started without its turn.completed / turn.failed. */
    turnOpen: boolean;
    /** The latest message.user's activation (0 before the first). */
    activation: number;
    /** Turns started in the latest activation so far. */
    turns: number;
    /** Observations after what the Agentloop's latest model.request read (its `conversation.through`), the first KEPT of them. @type {Observation[]} */
    unfed: Observation[];
    /** How many observations are unfed beyond `unfed`. */
    unfedMore: number;
    /**
     * Folds one committed record (records in journal order). For a turn.started, answers the turn it begins.
     * @param {RuleRecord} r
     * @returns {TurnStart | undefined}
     */
    observe(r: RuleRecord): TurnStart | undefined;
    /** @param {Observation} o */
    observed(o: Observation): void;
}
/**
 * What the rules read of a committed record (a JournalRecord of the contract).
 */
export type RuleRecord = {
    sequence: number;
    type: string;
    data?: any;
};
/**
 * An observation: something the model has not been told yet that wakes an idle Agentloop. `what` is
 * "result" (a tool.result), "finish" (a call finishing `ok` without any result), or the status of a
 * call that ended otherwise ("error", "timeout", "cancelled", "unknown").
 */
export type Observation = {
    sequence: number;
    callId: string;
    what: string;
};
/**
 * A turn as turn.started begins it: its activation, which of that activation's turns it is (1: the
 * message's own; each later one a wake), and for a wake, what woke it (the first observations not
 * fed to the model yet, and how many more there were).
 */
export type TurnStart = {
    activation: number;
    index: number;
    wake: boolean;
    wokenBy: Observation[];
    more: number;
};
