// @ts-check
// One session's journal folded into what the page shows. What is open, what awaits approval, which
// turn of its activation a turn is and what woke it come from journal-rules.js: the module the
// runtime's SessionState folds the same records with (served to the page as it is).
import { JournalRules, wokenByText as wokenByRule } from "./journal-rules.js";

/**
 * One session's journal folded into rows: a turn (its message, then its end), each model call (request,
 * response, usage) and each tool call (its whole life) is one row, in journal order.
 */
export class Timeline {
  constructor() {
    this.items = [];
    this.calls = new Map();
    this.models = new Map();
    this.turns = new Map();
    /** ctx.environments operations by the sequence of their environment.request. */
    this.environmentOps = new Map();
    this.records = 0;
    this.lastSeq = 0;
    this.deleted = false;
    this.changed = new Set();
    /** The items the time axis draws (turns, model calls, tool calls), in journal order. */
    this.spans = [];
    /** The journal's rules, the runtime's own: what is open, what awaits a person, what woke a turn. */
    this.rules = new JournalRules();
  }

  push(item) {
    item.index = this.items.length;
    item.version = 0;
    this.items.push(item);
    if (item.kind === "turn" || item.kind === "model" || item.kind === "tool") this.spans.push(item);
    return item;
  }
  touch(item) {
    item.version++;
    this.changed.add(item);
  }

  add(r) {
    if (r.sequence <= this.lastSeq) return;
    this.lastSeq = r.sequence;
    this.records++;
    const d = r.data;
    const turnStart = this.rules.observe(r);
    switch (r.type) {
      case "session.created":
        this.push({ kind: "session", seq: r.sequence, at: r.at, data: d });
        break;
      case "message.user": {
        const turn = this.push({ kind: "turn", seq: r.sequence, at: r.at, activation: d.activation, n: 1, text: d.text, status: "running" });
        this.turns.set(d.activation, turn);
        break;
      }
      case "turn.started": {
        // Which turn of its activation this is, and for a wake what woke it: the journal's rules.
        const start = /** @type {import("./journal-rules.js").TurnStart} */ (turnStart);
        let turn = this.turns.get(d.activation);
        if (start.wake || !turn || turn.status !== "running") {
          const wokenBy = start.wake ? wokenByRule(start, (callId) => this.calls.get(callId)?.tool ?? callId) : undefined;
          turn = this.push({ kind: "turn", seq: r.sequence, at: r.at, activation: d.activation, n: start.index, wake: start.wake, wokenBy, status: "running" });
          this.turns.set(d.activation, turn);
        } else this.touch(turn);
        turn.cause = d.cause;
        break;
      }
      case "turn.completed":
      case "turn.failed": {
        const turn = this.turns.get(d.activation);
        const status = r.type === "turn.completed" ? "completed" : "failed";
        if (turn) {
          Object.assign(turn, { status, endAt: r.at, answer: d.text, error: d.error });
          this.touch(turn);
        }
        this.push({ kind: "turnEnd", seq: r.sequence, at: r.at, activation: d.activation, status, text: d.text, error: d.error, turn });
        // Calls of this activation still open when its turn ends run in the background.
        for (const c of this.calls.values()) {
          if (c.activation === d.activation && this.rules.openCalls.has(c.callId) && !c.background) {
            c.background = true;
            c.turnEndAt = r.at;
            this.touch(c);
          }
        }
        break;
      }
      case "model.request": {
        const m = this.push({ kind: "model", seq: r.sequence, at: r.at, origin: d.origin, request: d.request, conversation: d.conversation, status: "pending" });
        this.models.set(r.sequence, m);
        const call = d.origin && this.calls.get(d.origin);
        if (call) {
          (call.modelCalls ??= []).push(m);
          m.tool = call.tool;
          this.touch(call);
        }
        break;
      }
      case "model.response": {
        let m = d.request !== undefined ? this.models.get(d.request) : undefined;
        if (!m) m = [...this.models.values()].reverse().find((x) => x.status === "pending" && x.origin === d.origin);
        if (!m) break;
        Object.assign(m, { status: d.error ? "error" : "ok", result: d.result, error: d.error, endAt: r.at, responseSeq: r.sequence });
        if (d.result?.usage && !m.usage) m.usage = d.result.usage;
        this.touch(m);
        break;
      }
      case "model.usage": {
        const m = [...this.models.values()].reverse().find((x) => x.status !== "pending" && x.origin === d.origin);
        if (m) {
          m.usage = d.usage;
          this.touch(m);
        }
        break;
      }
      case "tool.call_started": {
        const c = this.push({ kind: "tool", seq: r.sequence, at: r.at, callId: d.callId, tool: d.tool, modelCallId: d.modelCallId, origin: d.origin, input: d.input, placement: d.placement, activation: d.activation, deadlineAt: d.deadlineAt, status: "running", events: 0, results: 0, life: [{ type: "intent", seq: r.sequence, at: r.at }] });
        // A call of a tool placed with approval waits for a decision before anything is sent.
        if (d.approval) c.approval = { inputDigest: d.approval.inputDigest };
        c.awaiting = this.rules.pendingApprovals.has(d.callId);
        this.calls.set(d.callId, c);
        break;
      }
      case "tool.approval_decided": {
        const c = this.calls.get(d.callId);
        if (!c?.approval) return void this.push({ kind: "other", seq: r.sequence, at: r.at, type: r.type, data: d });
        Object.assign(c.approval, { decision: d.decision, decidedBy: d.decidedBy, reason: d.reason, at: r.at, seq: r.sequence });
        c.life.push({ type: "decision", seq: r.sequence, at: r.at, decision: d.decision, decidedBy: d.decidedBy, reason: d.reason });
        c.awaiting = this.rules.pendingApprovals.has(d.callId);
        this.touch(c);
        break;
      }
      case "tool.event":
      case "tool.result":
      case "tool.returned":
      case "tool.finished": {
        const c = this.calls.get(d.callId);
        if (!c) break;
        if (r.type === "tool.event") {
          c.events++;
          c.life.push({ type: "event", seq: r.sequence, at: r.at, kind: d.kind, data: d.data });
        } else if (r.type === "tool.result") {
          c.results++;
          c.life.push({ type: "result", seq: r.sequence, at: r.at, outcome: d.outcome, content: d.content });
        } else if (r.type === "tool.returned") {
          c.returned = r.at;
          c.life.push({ type: "returned", seq: r.sequence, at: r.at });
        } else {
          Object.assign(c, { status: d.status, error: d.error, message: d.message, endAt: r.at });
          c.life.push({ type: "finished", seq: r.sequence, at: r.at, status: d.status, error: d.error, message: d.message });
          c.awaiting = this.rules.pendingApprovals.has(d.callId);
        }
        this.touch(c);
        break;
      }
      case "environment.request": {
        // An Environment control operation is a step in its caller's life; its answer completes it.
        const call = this.calls.get(d.origin);
        if (!call) return void this.push({ kind: "other", seq: r.sequence, at: r.at, type: r.type, data: d });
        const op = { type: "environment", seq: r.sequence, at: r.at, request: d.request, status: "pending" };
        this.environmentOps.set(r.sequence, { op, call });
        call.life.push(op);
        this.touch(call);
        break;
      }
      case "environment.response": {
        const found = this.environmentOps.get(d.request);
        if (!found) return void this.push({ kind: "other", seq: r.sequence, at: r.at, type: r.type, data: d });
        Object.assign(found.op, { status: d.error ? "error" : "ok", error: d.error, result: d.result, endAt: r.at, responseSeq: r.sequence });
        this.environmentOps.delete(d.request);
        this.touch(found.call);
        break;
      }
      case "session.deleted":
        this.deleted = true;
        this.push({ kind: "deleted", seq: r.sequence, at: r.at });
        break;
      default:
        this.push({ kind: "other", seq: r.sequence, at: r.at, type: r.type, data: d });
    }
  }

  get openCalls() {
    return this.rules.openCalls.size;
  }
  /** Calls waiting for a decision (open, asked for approval, not decided), oldest first. */
  get pendingApprovals() {
    return [...this.rules.pendingApprovals].map((id) => this.calls.get(id)).filter((c) => c !== undefined);
  }
  /** A turn is open (turn.started without its end), or a message's turn is about to start. */
  get running() {
    if (this.rules.turnOpen) return true;
    for (const t of this.turns.values()) if (t.status === "running") return true;
    return false;
  }
}

/** Whether a call waits for a person (the journal's rules, set on the call as its records come). */
export function awaitingApproval(c) {
  return c.awaiting === true;
}

export function callStatusText(c) {
  if (c.status === "error") return `error · ${c.error?.code ?? "error"}`;
  if (awaitingApproval(c)) return "awaiting approval";
  return c.status;
}

/** What woke a wake turn (journal-rules.js: the observations the model had not been fed when it started). */
export function wokenByText(turn) {
  return turn.wokenBy ?? "woken";
}

/** A turn's name: the activation it belongs to, and for a wake, which of its turns it is. */
export function turnName(t) {
  return t.wake ? `Turn ${t.activation} · wake ${t.n - 1}` : `Turn ${t.activation}`;
}

