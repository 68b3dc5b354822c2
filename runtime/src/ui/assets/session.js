// @ts-check
// One session's page (/ui/sessions/:id): its summary, actions, calls waiting for approval, the time
// axis, the virtualised timeline (a listbox) and the selected row's details, live over SSE.
import { h, badge, plural, modelLabel, fmtTime, payload, deadlineEl, tickDeadline } from "./dom.js";
import { api } from "./api.js";
import { act, confirmAction, reasons, approvalControls } from "./actions.js";
import { main, crumbs, onLeave } from "./nav.js";
import { Timeline } from "./timeline.js";
import { rowParts } from "./rows.js";
import { detailOf } from "./call-panel.js";
import { TimeAxis } from "./axis.js";

// px; every timeline row has this height, so the list is virtualised by arithmetic. On a narrow
// screen (app.css, the same width) a row takes two lines: what it is, then its state.
const NARROW = matchMedia("(max-width: 600px)");
let ROW_H = NARROW.matches ? 54 : 36;
const OVERSCAN = 8;

export async function showSession(id) {
  document.title = `${id} · Brain`;
  crumbs.replaceChildren(h("a", { href: "/ui", "data-nav": true }, "Sessions"), " / ", h("span", { class: "mono" }, id));
  main.replaceChildren(h("p", { class: "muted" }, "Loading…"));
  let session;
  try {
    session = await api(`/v1/sessions/${encodeURIComponent(id)}`);
  } catch (e) {
    main.replaceChildren(
      h("div", { class: "err-box", role: "alert", id: "session-error", dataset: { status: String(e.status ?? "") } }, e.status === 404 ? `No session ${id} is visible with this key (404 ${e.code}).` : `Could not open session ${id}: ${e.message} (${e.status} ${e.code}).`),
      h("p", {}, h("a", { href: "/ui", "data-nav": true }, "Back to the sessions")),
    );
    return;
  }
  performance.mark("brain:session-read");
  const view = new TimelineView(session);
  main.replaceChildren(view.el);
  view.connect();
  // The keyboard works from load: ↓ selects the first row, Enter opens it.
  view.rows.focus();
  onLeave(() => view.close());
}

/**
 * One session's journal folded into rows: a turn (its message, then its end), each model call (request,
 * response, usage) and each tool call (its whole life) is one row, in journal order.

/** The session page: summary, the virtualised timeline (a listbox) and the selected row's details. */
class TimelineView {
  constructor(session) {
    this.session = session;
    this.t = new Timeline();
    this.selected = -1;
    this.shownVersion = -1;
    this.scheduled = false;
    this.firstScreen = false;
    this.status = h("span", {}, badge(session.status));
    this.counts = h("span", { class: "muted", id: "counts" });
    this.live = h("span", { class: "live off", id: "live", role: "status" }, "connecting");
    this.follow = h("input", { type: "checkbox", id: "follow" });
    this.space = h("div", { class: "rows-space" });
    this.rows = h("div", { class: "rows", id: "timeline", role: "listbox", tabindex: "0", "aria-label": "Timeline: turns, model calls and tool calls in journal order" }, this.space);
    this.detail = h("section", { class: "detail", id: "detail", tabindex: "-1", "aria-label": "Details", "aria-live": "polite" }, h("p", { class: "muted" }, "Select a row to see its details."), h("p", { class: "help" }, h("kbd", {}, "↑"), " ", h("kbd", {}, "↓"), " move, ", h("kbd", {}, "Enter"), " opens the details, ", h("kbd", {}, "Esc"), " comes back, ", h("kbd", {}, "Home"), "/", h("kbd", {}, "End"), " jump."));
    // Acting on the session: every action goes through the API with the login's credential.
    this.message = h("input", { type: "text", id: "message", name: "message", autocomplete: "off", placeholder: "Send a message to the session" });
    this.sendButton = h("button", { type: "submit", id: "send" }, "Send");
    this.cancelTurnButton = h("button", { type: "button", id: "cancel-turn", class: "danger", disabled: true, onclick: () => void this.cancelTurn() }, "Cancel turn");
    this.deleteButton = h("button", { type: "button", id: "delete-session", class: "danger", onclick: () => void this.deleteSession() }, "Delete session");
    this.actionStatus = h("p", { id: "action-status", class: "action-status", role: "status" });
    this.actions = h(
      "form",
      { class: "session-actions", id: "session-actions", onsubmit: (e) => {
        e.preventDefault();
        void this.sendMessage();
      } },
      h("label", { for: "message", class: "sr-only" }, "Message"),
      this.message,
      this.sendButton,
      this.cancelTurnButton,
      this.deleteButton,
    );
    this.approvals = h("section", { id: "approvals", class: "approvals", "aria-label": "Calls waiting for approval", hidden: true });
    this.axis = new TimeAxis((i) => this.select(i));
    this.approvalsShown = "";
    this.el = h(
      "div",
      {},
      h("div", { class: "summary" }, h("h1", {}, session.id), this.status, h("span", {}, modelLabel(session.model)), h("span", { class: "muted" }, `created ${fmtTime(Date.parse(session.createdAt))}`), this.counts, h("label", {}, this.follow, " follow new records"), this.live),
      this.actions,
      this.actionStatus,
      this.approvals,
      this.axis.el,
      h("div", { class: "split" }, this.rows, this.detail),
    );
    // Approve, deny and cancel buttons live in the approvals panel and in a call's details.
    for (const where of [this.approvals, this.detail]) where.addEventListener("click", (e) => void this.onAction(e));
    this.rows.addEventListener("scroll", () => this.schedule());
    this.rows.addEventListener("keydown", (e) => this.key(e));
    this.rows.addEventListener("click", (e) => {
      const row = e.target.closest?.("[data-row]");
      if (row) this.select(Number(row.dataset.row));
    });
    this.detail.addEventListener("keydown", (e) => {
      if (e.key === "Escape") {
        e.preventDefault();
        this.rows.focus();
      }
    });
    this.onNarrow = () => {
      ROW_H = NARROW.matches ? 54 : 36;
      this.schedule();
    };
    NARROW.addEventListener("change", this.onNarrow);
    this.resize = new ResizeObserver(() => this.schedule());
    this.resize.observe(this.rows);
    this.ticker = setInterval(() => {
      for (const el of document.querySelectorAll(".deadline[data-deadline]")) tickDeadline(el);
      // Drawn here, off the path of the rows: when records came, and while open bars grow with the clock.
      if (this.axisDirty || this.axis.live) {
        this.axisDirty = false;
        this.axis.draw(this.t);
      }
    }, 250);
  }

  connect() {
    const url = `/v1/sessions/${encodeURIComponent(this.session.id)}/events`;
    this.es = new EventSource(url);
    this.es.onopen = () => this.setLive(true);
    // A stream the server ended (each lasts at most BRAIN_MAX_STREAM_MS; a node restarted) is opened
    // again by the EventSource itself, from the last id it got (Last-Event-ID): "reconnecting". One it
    // cannot open again (the login or its key revoked: 401) stays closed.
    this.es.onerror = () => this.setLive(false, this.es.readyState === EventSource.CLOSED ? "closed (reload the page)" : undefined);
    this.es.onmessage = (e) => {
      if (this.t.records === 0) performance.mark("brain:first-record");
      this.t.add(JSON.parse(e.data));
      if (this.t.deleted) {
        // Nothing follows session.deleted; do not let EventSource reconnect.
        this.es.close();
        this.setLive(false, "closed (deleted)");
      }
      this.schedule();
    };
  }

  setLive(on, text) {
    this.live.className = `live ${on ? "on" : "off"}`;
    this.live.textContent = text ?? (on ? "live" : "reconnecting");
  }

  close() {
    NARROW.removeEventListener("change", this.onNarrow);
    this.es?.close();
    clearInterval(this.ticker);
    this.resize.disconnect();
  }

  schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      this.render();
    });
  }

  render() {
    const items = this.t.items;
    const n = items.length;
    if (this.follow.checked && this.t.changed.size > 0) this.rows.scrollTop = n * ROW_H;
    this.space.style.height = `${n * ROW_H}px`;
    const top = this.rows.scrollTop;
    const height = this.rows.clientHeight;
    const first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
    const last = Math.min(n, Math.ceil((top + height) / ROW_H) + OVERSCAN);
    const rows = [];
    for (let i = first; i < last; i++) {
      const item = items[i];
      const [icon, what, right] = rowParts(item);
      rows.push(
        h(
          "div",
          {
            class: `row k-${item.kind}${item.origin ? " nested" : ""}`,
            id: `row-${i}`,
            role: "option",
            "aria-selected": String(i === this.selected),
            style: `top:${i * ROW_H}px`,
            dataset: { row: String(i), kind: item.kind, seq: String(item.seq), call: item.callId, status: item.status, approval: item.approval ? item.approval.decision ?? "pending" : undefined },
          },
          h("span", { class: "seq" }, `#${item.seq}`),
          h("span", { class: "kind", "aria-hidden": "true" }, icon),
          h("span", { class: "what", title: what }, what),
          h("span", { class: "right" }, ...right),
        ),
      );
    }
    this.space.replaceChildren(...rows);
    if (this.selected >= 0) this.rows.setAttribute("aria-activedescendant", `row-${this.selected}`);
    // Summary.
    const t = this.t;
    const state = t.deleted ? "deleted" : t.running ? "running" : "idle";
    this.status.replaceChildren(badge(state));
    this.counts.textContent = `${plural(t.records, "record")} · ${plural(t.calls.size, "tool call")} · ${plural(t.openCalls, "open call")}`;
    this.cancelTurnButton.disabled = state !== "running";
    for (const el of [this.message, this.sendButton, this.deleteButton]) el.disabled = t.deleted;
    this.drawApprovals();
    if (t.changed.size > 0) this.axisDirty = true;
    // The selected item's details follow its new records.
    const sel = items[this.selected];
    if (sel && sel.version !== this.shownVersion) this.showDetail();
    t.changed.clear();
    if (!this.firstScreen && n > 0 && (n * ROW_H >= height || rows.length === n)) {
      this.firstScreen = true;
      performance.mark("brain:first-screen", { detail: { rows: rows.length, items: n } });
    }
  }

  /** The calls waiting for approval, at the top of the page; drawn again only when that list changes. */
  drawApprovals() {
    const pending = this.t.pendingApprovals;
    const key = pending.map((c) => c.callId).join(" ");
    if (key === this.approvalsShown) return;
    this.approvalsShown = key;
    this.approvals.hidden = pending.length === 0;
    if (pending.length === 0) return void this.approvals.replaceChildren();
    this.approvals.replaceChildren(
      h("h2", {}, `${plural(pending.length, "call")} waiting for approval`),
      h(
        "ul",
        {},
        ...pending.map((c) =>
          h(
            "li",
            { dataset: { pending: c.callId } },
            h("div", { class: "approval-head" }, h("strong", {}, c.tool), " ", h("a", { href: "#", class: "mono", dataset: { open: String(c.index) } }, c.callId), typeof c.deadlineAt === "number" ? [" · ", deadlineEl(c.deadlineAt)] : null),
            payload(c.input, `${c.seq}:pending-input`, `input of ${c.callId}`),
            approvalControls(c),
          ),
        ),
      ),
    );
  }

  /** Approve, deny, cancel a call, or open a call from the approvals panel. */
  async onAction(e) {
    const el = e.target.closest?.("[data-approve], [data-deny], [data-cancel-call], [data-open]");
    if (!el) return;
    e.preventDefault();
    const { approve, deny, cancelCall, open } = el.dataset;
    if (open !== undefined) return this.select(Number(open), true);
    if (cancelCall !== undefined) {
      if (!(await confirmAction(`Cancel call ${cancelCall}? It ends cancelled and its host is told to stop.`, "Cancel the call"))) return;
      return this.run(el, "Cancelled", () => act("POST", `${this.path}/cancel`, { callId: cancelCall }));
    }
    const callId = approve ?? deny;
    const c = this.t.calls.get(callId);
    if (!c?.approval) return;
    const reason = (reasons.get(callId) ?? "").trim();
    const decision = approve !== undefined ? "approve" : "deny";
    const body = { decision, inputDigest: c.approval.inputDigest, ...(reason ? { reason } : {}) };
    const sequence = callId.slice(callId.lastIndexOf(":") + 1);
    await this.run(el, decision === "approve" ? `Approved ${callId}` : `Denied ${callId}`, () => act("POST", `${this.path}/calls/${sequence}/approval`, body));
    reasons.delete(callId);
  }

  get path() {
    return `/v1/sessions/${encodeURIComponent(this.session.id)}`;
  }

  /** Runs one action with its button disabled, and says how it went (the timeline shows its records). */
  async run(button, done, action) {
    button.disabled = true;
    this.actionStatus.className = "action-status";
    this.actionStatus.textContent = "…";
    try {
      await action();
      this.actionStatus.textContent = `${done}.`;
      return true;
    } catch (err) {
      this.actionStatus.className = "action-status err";
      this.actionStatus.textContent = `${err.message} (${err.status} ${err.code})`;
      return false;
    } finally {
      button.disabled = false;
      this.schedule();
    }
  }

  async sendMessage() {
    const text = this.message.value;
    if (text.trim() === "") return;
    // One key per message typed: a resent request (a double click, a retry) never starts a second turn.
    const key = crypto.randomUUID();
    if (await this.run(this.sendButton, "Message sent", () => act("POST", `${this.path}/messages`, { text }, { "idempotency-key": key }))) this.message.value = "";
  }

  async cancelTurn() {
    if (!(await confirmAction("Cancel the running turn? Its open calls end cancelled.", "Cancel the turn"))) return;
    await this.run(this.cancelTurnButton, "Turn cancelled", () => act("POST", `${this.path}/cancel`, {}));
  }

  async deleteSession() {
    if (!(await confirmAction(`Delete session ${this.session.id}? Its open calls and turn are cancelled, and nothing more can be sent to it.`, "Delete the session"))) return;
    await this.run(this.deleteButton, "Session deleted", () => act("DELETE", this.path));
  }

  select(i, focusDetail = false) {
    const n = this.t.items.length;
    if (n === 0) return;
    i = Math.max(0, Math.min(n - 1, i));
    this.selected = i;
    const top = i * ROW_H;
    if (top < this.rows.scrollTop) this.rows.scrollTop = top;
    else if (top + ROW_H > this.rows.scrollTop + this.rows.clientHeight) this.rows.scrollTop = top + ROW_H - this.rows.clientHeight;
    this.render();
    this.showDetail();
    if (focusDetail) this.detail.focus();
  }

  showDetail() {
    const item = this.t.items[this.selected];
    if (!item) return;
    this.shownVersion = item.version;
    this.detail.replaceChildren(...[detailOf(item, this.t)].flat(Infinity).filter(Boolean));
  }

  key(e) {
    const page = Math.max(1, Math.floor(this.rows.clientHeight / ROW_H) - 1);
    const moves = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1, PageDown: page, PageUp: -page };
    if (e.key in moves) this.select(this.selected < 0 ? 0 : this.selected + moves[e.key]);
    else if (e.key === "Home") this.select(0);
    else if (e.key === "End") this.select(this.t.items.length - 1);
    else if (e.key === "Enter" || e.key === " ") this.select(this.selected < 0 ? 0 : this.selected, true);
    else return;
    e.preventDefault();
  }
}
