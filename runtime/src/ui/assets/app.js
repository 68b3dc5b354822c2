// @ts-check (tsconfig.ui.json; runtime/test/ui-script.test.ts runs it)
// Brain session viewer: a plain ES module served by the runtime at /ui/assets/app.js (no build
// step; docs/decisions/ui.md). It reads the ordinary HTTP API with the login cookie: the session
// list (GET /v1/sessions), one session (GET /v1/sessions/:id) and its journal live over SSE
// (GET /v1/sessions/:id/events with Accept: text/event-stream). Nothing is polled.

// px; every timeline row has this height, so the list is virtualised by arithmetic. On a narrow
// screen (app.css, the same width) a row takes two lines: what it is, then its state.
const NARROW = matchMedia("(max-width: 600px)");
let ROW_H = NARROW.matches ? 54 : 36;
const OVERSCAN = 8;
const PAGE_SIZE = 25;
const PREVIEW_CHARS = 600;

/** What the current view holds open (EventSource, timers); closed when the route changes. */
let cleanups = [];
const main = document.getElementById("main");
const crumbs = document.getElementById("crumbs");

// ---------------------------------------------------------------- small helpers

/** h("div", {class: "x", onclick: fn, "aria-label": "y"}, child, "text", ...) */
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "dataset") for (const [dk, dv] of Object.entries(v)) dv !== undefined && (el.dataset[dk] = dv);
    else if (k === "style") el.style.cssText = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  // Deeply: a fact's value may be a list holding lists ([badge, [" ", tag]]); one level left
  // "[object HTMLSpanElement]" in the text.
  for (const kid of kids.flat(Infinity)) if (kid !== undefined && kid !== null && kid !== false) el.append(kid instanceof Node ? kid : String(kid));
  return el;
}

const pad = (n, w = 2) => String(n).padStart(w, "0");
const ZONE = new Intl.DateTimeFormat("en", { timeZoneName: "short" });
/** The browser's time zone at `d`, as people write it ("UTC", "GMT+2", "PST"). */
function zoneOf(d) {
  return ZONE.formatToParts(d).find((p) => p.type === "timeZoneName")?.value ?? "";
}
/** A time with its date, milliseconds and time zone (the browser's). */
function fmtTime(ms) {
  if (typeof ms !== "number") return "—";
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)} ${zoneOf(d)}`;
}
function fmtDur(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60_000);
  if (m < 60) return `${m} min ${Math.round((ms % 60_000) / 1000)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}
function ago(ms) {
  const d = Date.now() - ms;
  return d < 1500 ? "just now" : `${fmtDur(d)} ago`;
}
function bytes(n) {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
}
const plural = (n, one, many = `${one}s`) => `${n.toLocaleString("en")} ${n === 1 ? one : many}`;
function modelLabel(model) {
  if (!model) return "—";
  if (model.provider === "scripted") return `scripted (${plural(model.script?.length ?? 0, "step")})`;
  return `${model.provider} ${model.model ?? ""}`.trim();
}
function placementLabel(p) {
  if (!p) return "—";
  switch (p.kind) {
    case "host": return `host ${p.hostId}`;
    case "component": return `component ${String(p.digest ?? p.component ?? "").slice(0, 12)}`;
    case "descriptor": return `environment ${p.env}`;
    case "http": return `HTTP ${p.url ?? ""}`.trim();
    case "http_plain": return `plain HTTP ${p.url ?? ""}`.trim();
    default: return p.kind;
  }
}
function badge(status, text = status) {
  return h("span", { class: `badge s-${status}` }, text);
}

/** JSON shown truncated, with a button that expands it in full (and back). */
const expanded = new Set();
function payload(value, key, label = "payload") {
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2) ?? "undefined";
  const long = text.length > PREVIEW_CHARS;
  const box = h("div", { class: "payload", dataset: { payload: key } });
  const pre = h("pre", { tabindex: "0", "aria-label": label });
  const draw = () => {
    const open = !long || expanded.has(key);
    pre.textContent = open ? text : `${text.slice(0, PREVIEW_CHARS)}…`;
    if (long) {
      button.textContent = open ? "Show less" : `Show all (${bytes(new TextEncoder().encode(text).length)})`;
      button.setAttribute("aria-expanded", String(open));
    }
  };
  const button = long
    ? h("button", {
        type: "button",
        onclick: () => {
          if (expanded.has(key)) expanded.delete(key);
          else expanded.add(key);
          draw();
        },
      })
    : null;
  box.append(pre);
  if (button) box.append(button);
  draw();
  return box;
}

/** A countdown element for a deadline; one timer for the page updates every one on screen. */
function deadlineEl(at) {
  const el = h("span", { class: "deadline", dataset: { deadline: String(at) } });
  tickDeadline(el);
  return el;
}
function tickDeadline(el) {
  const left = Number(el.dataset.deadline) - Date.now();
  el.textContent = left >= 0 ? `deadline in ${fmtDur(left)}` : `deadline passed ${fmtDur(-left)} ago`;
  el.classList.toggle("late", left < 0);
}

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}
async function api(path) {
  const res = await fetch(path, { headers: { accept: "application/json" }, credentials: "same-origin" });
  if (res.status === 401) {
    // The login expired (or its key was deleted): the page itself shows the login form.
    location.reload();
    throw new ApiError(401, "unauthorized", "signed out");
  }
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, body?.error?.code ?? "error", body?.error?.message ?? res.statusText);
  return body;
}

/** The login's anti-forgery token: the server puts it in the page's HTML, and bridges an action only with it. */
const CSRF = document.querySelector('meta[name="brain-csrf"]')?.getAttribute("content") ?? "";

/**
 * One action through the ordinary API (POST or DELETE under /v1/sessions/…), with the login cookie
 * and its anti-forgery token; resolves with the JSON answer, rejects with an ApiError.
 */
async function act(method, path, body, headers = {}) {
  const res = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: { accept: "application/json", "x-brain-csrf": CSRF, ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  if (res.status === 401) {
    location.reload();
    throw new ApiError(401, "unauthorized", "signed out");
  }
  const answer = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, answer?.error?.code ?? "error", answer?.error?.message ?? res.statusText);
  return answer;
}

/** A modal confirmation (a <dialog>): resolves true when the person confirms. Focus returns where it was. */
function confirmAction(question, confirmLabel) {
  return new Promise((resolve) => {
    const before = /** @type {HTMLElement | null} */ (document.activeElement);
    const keep = h("button", { type: "button", id: "confirm-keep", value: "keep" }, "Keep");
    const yes = h("button", { type: "button", id: "confirm-yes", class: "danger", value: "yes" }, confirmLabel);
    const dialog = h("dialog", { id: "confirm", "aria-labelledby": "confirm-q" }, h("p", { id: "confirm-q" }, question), h("div", { class: "dialog-buttons" }, keep, yes));
    const done = (ok) => {
      dialog.close();
      dialog.remove();
      before?.focus?.();
      resolve(ok);
    };
    keep.addEventListener("click", () => done(false));
    yes.addEventListener("click", () => done(true));
    dialog.addEventListener("cancel", (e) => {
      e.preventDefault();
      done(false);
    });
    document.body.append(dialog);
    dialog.showModal();
    keep.focus();
  });
}

/** Who made a decision, as its record says. */
function deciderLabel(by) {
  if (!by) return "—";
  return by.kind === "operator" ? "the operator" : `key ${by.name ?? by.keyId} (${by.keyId})`;
}

// ---------------------------------------------------------------- routing

function navigate(href) {
  history.pushState(null, "", href);
  route();
}
document.addEventListener("click", (e) => {
  const a = /** @type {Element} */ (e.target).closest?.("a[data-nav]");
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(a.getAttribute("href"));
});
addEventListener("popstate", () => route());

function route() {
  for (const c of cleanups) c();
  cleanups = [];
  const m = /^\/ui\/sessions\/([^/]+)\/?$/.exec(location.pathname);
  if (m) void showSession(decodeURIComponent(m[1]));
  else void showList();
}

// ---------------------------------------------------------------- theme

const themeButton = document.getElementById("theme");
function applyTheme(theme) {
  if (theme) document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
  const dark = theme ? theme === "dark" : matchMedia("(prefers-color-scheme: dark)").matches;
  themeButton.textContent = dark ? "Light" : "Dark";
  themeButton.setAttribute("aria-pressed", String(dark));
  themeButton.title = dark ? "Switch to the light theme" : "Switch to the dark theme";
}
themeButton.addEventListener("click", () => {
  const dark = themeButton.getAttribute("aria-pressed") === "true";
  const next = dark ? "light" : "dark";
  try {
    localStorage.setItem("brain-theme", next);
  } catch {
    // Harmless: storage is off (private mode, policy); the theme applies now and is just not remembered.
  }
  applyTheme(next);
});
applyTheme((() => {
  try {
    return localStorage.getItem("brain-theme");
  } catch {
    return null; // storage is off: no remembered theme
  }
})());

// ---------------------------------------------------------------- sessions list

async function showList() {
  document.title = "Sessions · Brain";
  crumbs.replaceChildren("Sessions");
  const status = new URLSearchParams(location.search).get("status") ?? "";
  const filter = h(
    "select",
    { id: "state-filter", onchange: (e) => navigate(e.target.value ? `/ui?status=${e.target.value}` : "/ui") },
    ...["", "idle", "running", "deleted"].map((s) => h("option", { value: s, selected: s === status }, s || "all")),
  );
  const tbody = h("tbody");
  const table = h(
    "table",
    { class: "sessions", "aria-describedby": "list-note" },
    // Model, created and last activity give way on a narrow screen (.wide, app.css).
    h("thead", {}, h("tr", {}, ...["Session", "State", "Tools", "Model", "Created", "Last activity", "Open calls", "Approvals"].map((c, i) => h("th", { scope: "col", class: i >= 6 ? "num" : i >= 3 ? "wide" : undefined }, c)))),
    tbody,
  );
  // The first page now; each press of More reads the next one (GET /v1/sessions?cursor=<next>) and appends it.
  const more = h("button", { type: "button", id: "more", hidden: true, onclick: () => void load() }, "More");
  const count = h("span", { class: "muted", id: "list-count", role: "status" });
  const failure = h("div");
  // Search the sessions shown by id, first message or tool; Enter on a whole id opens that session.
  const search = h("input", { type: "search", id: "search", placeholder: "Search by id, message or tool", autocomplete: "off" });
  const applySearch = () => {
    const q = search.value.trim().toLowerCase();
    for (const tr of tbody.querySelectorAll("tr[data-session]")) tr.hidden = q !== "" && !tr.dataset.search.includes(q);
  };
  search.addEventListener("input", applySearch);
  search.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && /^ses_[0-9a-f]+$/.test(search.value.trim())) navigate(`/ui/sessions/${search.value.trim()}`);
  });
  // Sessions (of the pages shown) with calls waiting for a person, above the list.
  const waitingList = h("ul");
  const waiting = h("section", { id: "waiting", class: "approvals", "aria-label": "Sessions waiting for approval", hidden: true }, h("h2", {}, "Waiting for approval"), waitingList);
  main.replaceChildren(
    h("h1", {}, "Sessions"),
    waiting,
    h("div", { class: "toolbar" }, h("label", { for: "search", class: "sr-only" }, "Search"), search, h("label", { for: "state-filter" }, "State"), filter, h("button", { type: "button", onclick: () => route() }, "Refresh"), h("span", { id: "list-note", class: "muted" }, "Newest first.")),
    table,
    failure,
    h("nav", { class: "pager", "aria-label": "More sessions" }, more, count),
  );
  let alive = true;
  cleanups.push(() => (alive = false));
  let next;
  let shown = 0;
  let firstPage = true;
  tbody.addEventListener("keydown", (e) => {
    const moves = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1 };
    if (!(e.key in moves)) return;
    const links = [...tbody.querySelectorAll("tr[data-session] a")];
    const at = links.indexOf(document.activeElement);
    const to = links[Math.max(0, Math.min(links.length - 1, at + moves[e.key]))];
    if (!to) return;
    e.preventDefault();
    to.focus();
  });
  async function load() {
    more.disabled = true;
    const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (status) params.set("status", status);
    if (next) params.set("cursor", next);
    let page;
    try {
      page = await api(`/v1/sessions?${params}`);
    } catch (e) {
      if (!alive) return;
      failure.replaceChildren(h("p", { class: "err-box", role: "alert" }, `Could not list sessions: ${e.message} (${e.status ?? ""} ${e.code ?? ""})`));
      more.disabled = false;
      return;
    }
    if (!alive) return;
    failure.replaceChildren();
    for (const s of page.sessions) {
      tbody.append(sessionRow(s));
      const n = s.pendingApprovals?.length ?? 0;
      if (n > 0) {
        waitingList.append(h("li", { dataset: { waiting: s.id } }, h("a", { href: `/ui/sessions/${encodeURIComponent(s.id)}`, "data-nav": true, class: "mono" }, s.id), ` · ${plural(n, "call")} waiting · ${modelLabel(s.model)}`));
        waiting.hidden = false;
      }
    }
    applySearch();
    shown += page.sessions.length;
    next = page.next;
    if (shown === 0) tbody.append(h("tr", {}, h("td", { colspan: "8", class: "muted" }, status ? `No ${status} sessions.` : "No sessions yet.")));
    more.hidden = next === undefined;
    more.disabled = false;
    // The keyboard works from load: the first session has the focus, ↑/↓ move between sessions.
    if (firstPage) {
      firstPage = false;
      tbody.querySelector("a")?.focus();
    }
    count.textContent = next === undefined ? `${plural(shown, "session")}, all shown` : `${plural(shown, "session")} shown`;
  }
  await load();
}

/** Records read at the end of a listed session to find its last activity and how its last turn ended. */
const TAIL = 16;

/** One row of the sessions list: what tells it apart (its first message, tools, last outcome). */
function sessionRow(s) {
  const path = `/v1/sessions/${encodeURIComponent(s.id)}/events`;
  const last = h("td", { class: "wide", dataset: { lastActivity: s.id } }, "…");
  const state = h("td", { dataset: { state: s.id } }, badge(s.status));
  const first = h("div", { class: "first-message muted", dataset: { firstMessage: s.id } });
  const row = h(
    "tr",
    { dataset: { session: s.id, search: `${s.id} ${s.tools.map((t) => t.contract.name).join(" ")}`.toLowerCase() } },
    h("td", {}, h("a", { href: `/ui/sessions/${encodeURIComponent(s.id)}`, "data-nav": true, class: "mono" }, s.id), first),
    state,
    h("td", { class: "tools" }, s.tools.map((t) => t.contract.name).join(", ") || "—"),
    h("td", { class: "wide" }, modelLabel(s.model)),
    h("td", { class: "wide", title: s.createdAt }, fmtTime(Date.parse(s.createdAt))),
    last,
    h("td", { class: "num" }, String(s.openCalls.length)),
    h("td", { class: "num", dataset: { approvals: s.id }, title: (s.pendingApprovals?.length ?? 0) > 0 ? `${plural(s.pendingApprovals.length, "call")} waiting for approval` : undefined }, (s.pendingApprovals?.length ?? 0) > 0 ? badge("approval", String(s.pendingApprovals.length)) : "0"),
  );
  // Its first message (record 2 of a session that has one) and its last records: two small reads.
  api(`${path}?after=1&limit=1`)
    .then((r) => {
      const m = r.records[0];
      if (m?.type !== "message.user") return;
      first.textContent = m.data.text.length > 80 ? `${m.data.text.slice(0, 80)}…` : m.data.text;
      first.title = m.data.text;
      row.dataset.search += ` ${m.data.text.toLowerCase()}`;
    })
    .catch(() => undefined); // the row shows no first message; its id still tells it apart
  api(`${path}?after=${Math.max(0, s.lastSequence - TAIL)}`)
    .then((r) => {
      const at = r.records.at(-1)?.at;
      last.textContent = at ? ago(at) : "—";
      if (at) last.title = fmtTime(at);
      // A session whose last turn failed is not shown as a green idle.
      const end = r.records.findLast((x) => x.type === "turn.completed" || x.type === "turn.failed");
      if (end?.type === "turn.failed" && s.status === "idle") {
        state.replaceChildren(badge("failed", "failed"));
        state.title = `idle; its last turn failed: ${end.data.error.code}: ${end.data.error.message}`;
        row.dataset.outcome = "failed";
      } else if (end) row.dataset.outcome = "completed";
    })
    .catch(() => (last.textContent = "—"));
  return row;
}

// ---------------------------------------------------------------- one session

async function showSession(id) {
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
  cleanups.push(() => view.close());
}

/**
 * One session's journal folded into rows: a turn (its message, then its end), each model call (request,
 * response, usage) and each tool call (its whole life) is one row, in journal order.
 */
class Timeline {
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
    /** Turns so far of each activation: a wake is the activation's next turn. */
    this.turnCounts = new Map();
    /**
     * Observations committed since the last turn start (a model-asked call's result, or its end when
     * that tells something new: not ok, or ok without any result): what a wake turn was woken by.
     */
    this.observed = [];
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
    switch (r.type) {
      case "session.created":
        this.push({ kind: "session", seq: r.sequence, at: r.at, data: d });
        break;
      case "message.user": {
        this.turnCounts.set(d.activation, 1);
        const turn = this.push({ kind: "turn", seq: r.sequence, at: r.at, activation: d.activation, n: 1, text: d.text, status: "running" });
        this.turns.set(d.activation, turn);
        break;
      }
      case "turn.started": {
        let turn = this.turns.get(d.activation);
        if (d.cause === "wake" || !turn || turn.status !== "running") {
          const n = (this.turnCounts.get(d.activation) ?? 0) + 1;
          this.turnCounts.set(d.activation, n);
          turn = this.push({ kind: "turn", seq: r.sequence, at: r.at, activation: d.activation, n, wake: true, wokenBy: this.observed, status: "running" });
          this.turns.set(d.activation, turn);
        } else this.touch(turn);
        turn.cause = d.cause;
        this.observed = [];
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
          if (c.activation === d.activation && c.status === "running" && !c.background) {
            c.background = true;
            c.turnEndAt = r.at;
            this.touch(c);
          }
        }
        break;
      }
      case "model.request": {
        // The Agentloop's model call reads everything committed before it: a later wake was not woken by that.
        if (!d.origin) this.observed = [];
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
        this.calls.set(d.callId, c);
        break;
      }
      case "tool.approval_decided": {
        const c = this.calls.get(d.callId);
        if (!c?.approval) return void this.push({ kind: "other", seq: r.sequence, at: r.at, type: r.type, data: d });
        Object.assign(c.approval, { decision: d.decision, decidedBy: d.decidedBy, reason: d.reason, at: r.at, seq: r.sequence });
        c.life.push({ type: "decision", seq: r.sequence, at: r.at, decision: d.decision, decidedBy: d.decidedBy, reason: d.reason });
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
          if (!c.origin) this.observed.push({ tool: c.tool, callId: c.callId, what: "result" });
        } else if (r.type === "tool.returned") {
          c.returned = r.at;
          c.life.push({ type: "returned", seq: r.sequence, at: r.at });
        } else {
          Object.assign(c, { status: d.status, error: d.error, message: d.message, endAt: r.at });
          c.life.push({ type: "finished", seq: r.sequence, at: r.at, status: d.status, error: d.error, message: d.message });
          if (!c.origin && (d.status !== "ok" || c.results === 0)) this.observed.push({ tool: c.tool, callId: c.callId, what: d.status === "ok" ? "finish" : d.status });
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
    let n = 0;
    for (const c of this.calls.values()) if (c.status === "running") n++;
    return n;
  }
  /** Calls waiting for a decision (open, asked for approval, not decided), oldest first. */
  get pendingApprovals() {
    const out = [];
    for (const c of this.calls.values()) if (awaitingApproval(c)) out.push(c);
    return out;
  }
  get running() {
    for (const t of this.turns.values()) if (t.status === "running") return true;
    return false;
  }
}

/** Whether a call waits for a person: asked for approval, not decided, not ended. */
function awaitingApproval(c) {
  return c.status === "running" && c.approval !== undefined && c.approval.decision === undefined;
}

function callStatusText(c) {
  if (c.status === "error") return `error · ${c.error?.code ?? "error"}`;
  if (awaitingApproval(c)) return "awaiting approval";
  return c.status;
}

/** What woke a wake turn: the observations committed since the turn before it started. */
function wokenByText(turn) {
  const seen = turn.wokenBy ?? [];
  if (seen.length === 0) return "woken";
  const one = (o) => (o.what === "result" ? `${o.tool}'s result` : o.what === "finish" ? `${o.tool} finishing without a result` : `${o.tool} ending ${o.what}`);
  const named = seen.slice(0, 2).map(one).join(" and ");
  return `woken by ${named}${seen.length > 2 ? ` and ${seen.length - 2} more` : ""}`;
}

/** A turn's name: the activation it belongs to, and for a wake, which of its turns it is. */
function turnName(t) {
  return t.wake ? `Turn ${t.activation} · wake ${t.n - 1}` : `Turn ${t.activation}`;
}

/** The compact row of one item: [seq, icon, what, right side]. */
function rowParts(item) {
  switch (item.kind) {
    case "session":
      return ["◆", `Session created · ${modelLabel(item.data.model)} · ${plural(item.data.tools?.length ?? 0, "tool")}`, [h("span", { class: "muted" }, fmtTime(item.at))]];
    case "turn":
      return [
        "▶",
        item.wake ? `${turnName(item)}: ${wokenByText(item)}` : `${turnName(item)}: “${item.text}”`,
        [item.endAt ? h("span", { class: "muted" }, fmtDur(item.endAt - item.at)) : null, badge(item.status === "completed" ? "completed" : item.status, item.status)],
      ];
    case "turnEnd": {
      const name = item.turn ? turnName(item.turn) : `Turn ${item.activation}`;
      return ["■", item.status === "completed" ? `${name} answered: “${item.text}”` : `${name} failed: ${item.error?.code}: ${item.error?.message}`, [badge(item.status)]];
    }
    case "model": {
      const calls = item.result?.toolCalls?.map((t) => t.name) ?? [];
      const what = item.status === "pending" ? "waiting for the model" : item.error ? `${item.error.code}: ${item.error.message}` : calls.length ? `asks for ${calls.length > 3 ? `${calls.slice(0, 3).join(", ")} +${calls.length - 3}` : calls.join(", ")}` : `answers “${item.result?.text ?? ""}”`;
      return [
        "✦",
        `Model call${item.origin ? ` from ${item.tool ?? "a tool"} (ctx.model)` : ""} · ${what}`,
        [
          item.usage ? h("span", { class: "muted", title: "input · output tokens" }, `${item.usage.inputTokens} in · ${item.usage.outputTokens} out`) : null,
          item.endAt ? h("span", { class: "muted" }, fmtDur(item.endAt - item.at)) : null,
          badge(item.status === "error" ? "error" : item.status, item.status === "error" ? `error · ${item.error?.code}` : item.status),
        ],
      ];
    }
    case "tool": {
      const bits = [];
      if (item.events) bits.push(plural(item.events, "event"));
      if (item.results) bits.push(plural(item.results, "result"));
      return [
        "⚙",
        `${item.tool} · ${placementLabel(item.placement)}${bits.length ? ` · ${bits.join(" · ")}` : ""}`,
        [
          item.background ? h("span", { class: "badge bg-tag", title: "still running after its turn ended" }, "background") : null,
          item.status === "running" && typeof item.deadlineAt === "number" ? deadlineEl(item.deadlineAt) : null,
          item.endAt ? h("span", { class: "muted" }, fmtDur(item.endAt - item.at)) : null,
          badge(awaitingApproval(item) ? "approval" : item.status, callStatusText(item)),
        ],
      ];
    }
    case "deleted":
      return ["✕", "Session deleted", [badge("deleted")]];
    default:
      return ["·", item.type, []];
  }
}

/** The detail panel of one item. */
function detailOf(item, timeline) {
  const facts = (pairs) => h("dl", { class: "facts" }, ...pairs.filter(Boolean).flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
  const key = (s) => `${item.seq}:${s}`;
  switch (item.kind) {
    case "session":
      return [
        h("h2", {}, "Session created"),
        facts([["At", fmtTime(item.at)], ["Model", modelLabel(item.data.model)], item.data.deadlineMs !== undefined && ["Default deadline", fmtDur(item.data.deadlineMs)], ["Tools", (item.data.tools ?? []).map((t) => `${t.contract.name} (${placementLabel(t.placement)})`).join(", ") || "none"]]),
        item.data.system !== undefined ? [h("h2", {}, "System prompt"), payload(item.data.system, key("system"), "system prompt")] : null,
        h("h2", {}, "Model"),
        payload(item.data.model, key("model"), "model"),
        h("h2", {}, "Tools"),
        payload(item.data.tools ?? [], key("tools"), "tools"),
      ];
    case "turn":
    case "turnEnd": {
      const t = item.kind === "turn" ? item : item.turn ?? item;
      return [
        h("h2", {}, turnName(t)),
        facts([["State", badge(t.status)], ["Started", fmtTime(t.at)], t.endAt && ["Ended", fmtTime(t.endAt)], t.endAt && ["Duration", fmtDur(t.endAt - t.at)], ["Cause", t.wake ? `${wokenByText(t)} (a wake: the activation's turn ${t.n})` : "a user message"]]),
        t.text !== undefined ? [h("h2", {}, "User message"), payload(t.text, key("text"), "user message")] : null,
        t.answer !== undefined ? [h("h2", {}, "Answer"), payload(t.answer, key("answer"), "answer")] : null,
        t.error ? [h("h2", {}, "Error"), payload(t.error, key("error"), "error")] : null,
      ];
    }
    case "model":
      return [
        h("h2", {}, item.origin ? `Model call from ${item.tool ?? item.origin}` : "Model call (Agentloop)"),
        facts([
          ["State", badge(item.status === "error" ? "error" : item.status, item.status === "error" ? `error · ${item.error?.code}` : item.status)],
          ["Request", `#${item.seq} at ${fmtTime(item.at)}`],
          item.endAt && ["Response", `#${item.responseSeq} at ${fmtTime(item.endAt)}`],
          item.endAt && ["Duration", fmtDur(item.endAt - item.at)],
          item.usage && ["Usage", `${item.usage.inputTokens} input tokens · ${item.usage.outputTokens} output tokens`],
          item.result?.stopReason && ["Stop reason", item.result.stopReason],
          item.origin && ["Asked by call", h("span", { class: "mono" }, item.origin)],
          item.conversation && ["Conversation", `records 1–${item.conversation.through} of this session (the request is not copied; GET …/events?expand=requests rebuilds it)`],
        ]),
        item.request ? [h("h2", {}, "Request"), payload(item.request, key("request"), "model request")] : null,
        item.result ? [h("h2", {}, "Result"), payload(item.result, key("result"), "model result")] : null,
        item.error ? [h("h2", {}, "Error"), payload(item.error, key("error"), "model error")] : null,
      ];
    case "tool":
      return toolDetail(item, facts, key);
    case "deleted":
      return [h("h2", {}, "Session deleted"), facts([["At", fmtTime(item.at)]])];
    default:
      return [h("h2", {}, item.type), payload(item.data, key("data"))];
  }
}

/** A session's calls' trace ids (GET /ui/traces/<session>), fetched once per session and again for a call it did not know yet. */
const traceLists = new Map();

/** The Trace fact of a call: its trace id, linked to the operator's trace viewer when the server names one. */
function traceEl(callId) {
  const sessionId = callId.slice(0, callId.lastIndexOf(":"));
  const el = h("span", { class: "mono", id: "call-trace" }, "…");
  const fetchList = () => {
    const p = api(`/ui/traces/${encodeURIComponent(sessionId)}`).catch(() => ({ traces: {} }));
    traceLists.set(sessionId, p);
    return p;
  };
  const known = traceLists.get(sessionId);
  (known ?? fetchList())
    .then((list) => (list.traces[callId] === undefined && known !== undefined ? fetchList() : list))
    .then((list) => {
      const id = list.traces[callId];
      if (id === undefined) el.replaceChildren(h("span", { class: "muted" }, "none (tracing is off, or the call is not a recent one of this server)"));
      else el.replaceChildren(list.url ? h("a", { href: list.url.replace("{traceId}", id), target: "_blank", rel: "noopener" }, id) : id);
    });
  return el;
}

function toolDetail(c, facts, key) {
  const life = h("ol", { class: "life", "aria-label": "The call's life" });
  const step = (cls, title, at, seq, ...body) => life.append(h("li", { class: cls }, h("div", { class: "life-head" }, h("strong", {}, title), h("span", { class: "t" }, `#${seq} · ${fmtTime(at)} · +${fmtDur(at - c.at)}`)), ...body));
  for (const s of c.life) {
    if (s.type === "intent" && c.approval) step("ok", "Intent committed, awaiting approval", s.at, s.seq, h("div", { class: "help" }, `Nothing is sent until a person approves this call with this input (digest ${c.approval.inputDigest.slice(0, 16)}…).`));
    else if (s.type === "intent") step("ok", `Intent committed, sent to ${placementLabel(c.placement)}`, s.at, s.seq, h("div", { class: "help" }, "The runtime sends the invoke once, right after this commit; it is never re-sent."));
    else if (s.type === "decision") {
      const approved = s.decision === "approve";
      step(approved ? "ok" : "bad", `${approved ? "Approved" : "Denied"} by ${deciderLabel(s.decidedBy)}${approved ? `, sent to ${placementLabel(c.placement)}` : ""}`, s.at, s.seq, s.reason ? h("div", {}, `Reason: ${s.reason}`) : null, approved ? h("div", { class: "help" }, "The runtime sends the invoke once, right after this commit; it is never re-sent.") : null);
    }
    else if (s.type === "event") step("", `Event “${s.kind}”`, s.at, s.seq, payload(s.data, key(`event-${s.seq}`), `event ${s.kind}`));
    else if (s.type === "result") step(s.outcome?.status === "ok" ? "ok" : "bad", `Result · ${s.outcome?.status ?? "?"}`, s.at, s.seq, payload(s.outcome, key(`result-${s.seq}`), "result outcome"), s.content !== undefined ? [h("div", { class: "help" }, "content (what the model reads):"), payload(s.content, key(`content-${s.seq}`), "result content")] : null);
    else if (s.type === "returned") step("", "Returned", s.at, s.seq, h("div", { class: "help" }, c.status === "running" ? "run() ended without finishing: the call continues in the background." : "run() ended before the call finished."));
    else if (s.type === "environment") {
      const what = `ctx.environments.${s.request?.operation ?? "?"}${s.request?.name !== undefined ? ` ${s.request.name}` : s.request?.spec?.name !== undefined ? ` ${s.request.spec.name}` : ""}`;
      const state = s.status === "pending" ? "waiting" : s.status === "ok" ? (s.result?.callId ? `nested call ${s.result.callId}` : "done") : `refused · ${s.error?.code ?? "?"}`;
      step(s.status === "error" ? "bad" : s.status === "ok" ? "ok" : "", `${what} · ${state}`, s.at, s.seq, payload(s.request, key(`env-${s.seq}`), "environment request"), s.error ? payload(s.error, key(`env-error-${s.seq}`), "error") : null);
    } else if (s.type === "finished") step(s.status === "ok" ? "ok" : "bad", `Finished · ${s.status}${s.error ? ` · ${s.error.code}` : ""}`, s.at, s.seq, s.message ? h("div", {}, s.message) : null, s.error ? payload(s.error, key(`error-${s.seq}`), "error") : null);
  }
  if (c.status === "running") life.append(h("li", { class: "open" }, h("div", { class: "life-head" }, h("strong", {}, awaitingApproval(c) ? "Waiting for a decision" : "Open"), typeof c.deadlineAt === "number" ? deadlineEl(c.deadlineAt) : h("span", { class: "muted" }, "no deadline"))));
  return [
    h("h2", {}, `Tool call ${c.tool}`),
    awaitingApproval(c) ? approvalControls(c) : c.status === "running" ? h("div", { class: "actions" }, h("button", { type: "button", class: "danger", dataset: { cancelCall: c.callId } }, "Cancel this call")) : null,
    facts([
      ["State", [badge(c.status, callStatusText(c)), c.background ? [" ", h("span", { class: "badge bg-tag" }, "background")] : null]],
      ["Call id", h("span", { class: "mono" }, c.callId)],
      c.origin ? ["Started by", [h("span", { class: "mono" }, c.origin), " (ctx.environments.call: a nested call, not the model's)"]] : ["Model call id", h("span", { class: "mono" }, c.modelCallId)],
      ["Runs on", placementLabel(c.placement)],
      c.approval && ["Approval", c.approval.decision ? `${c.approval.decision === "approve" ? "approved" : "denied"} by ${deciderLabel(c.approval.decidedBy)}${c.approval.reason ? `: ${c.approval.reason}` : ""}` : c.status === "running" ? "awaiting a decision" : `never decided (the call ended ${c.status})`],
      ["Turn", String(c.activation)],
      ["Trace", traceEl(c.callId)],
      ["Started", fmtTime(c.at)],
      ["Deadline", typeof c.deadlineAt === "number" ? [fmtTime(c.deadlineAt), c.status === "running" ? [" (", deadlineEl(c.deadlineAt), ")"] : null] : "none"],
      c.endAt && ["Duration", fmtDur(c.endAt - c.at)],
      c.background && ["Background", "its turn ended while it was still running"],
    ]),
    h("h2", {}, "Input"),
    payload(c.input, key("input"), "input"),
    h("h2", {}, "Life"),
    life,
    c.modelCalls?.length ? [h("h2", {}, "Its model calls (ctx.model)"), h("ul", {}, ...c.modelCalls.map((m) => h("li", {}, `#${m.seq} · ${m.status}${m.usage ? ` · ${m.usage.inputTokens} in / ${m.usage.outputTokens} out` : ""}${m.endAt ? ` · ${fmtDur(m.endAt - m.at)}` : ""}`)))] : null,
  ];
}


/** Bars drawn at most (the most recent ones): the axis of a long session shows its latest work. */
const AXIS_MAX_BARS = 400;
const LANE_H = 14;

/**
 * The session's time axis: each turn, model call and tool call as a bar from its start to its end
 * on one time scale, open ones growing to now, calls that ran side by side on lanes of their own,
 * and a background call's part after its turn ended hatched. The compact list beside it stays the
 * accessible view (the bars are not in the tab order); a click on a bar selects its row.
 */
class TimeAxis {
  constructor(onPick) {
    this.bars = h("div", { class: "axis-bars", "aria-hidden": "true" });
    this.scale = h("div", { class: "axis-scale" });
    this.note = h("span", { class: "muted" });
    const key = (cls, text) => h("span", { class: "axis-key" }, h("span", { class: `swatch ${cls}` }), text);
    this.el = h(
      "section",
      { id: "axis", class: "axis", "aria-label": "Time axis" },
      h("div", { class: "axis-head" }, h("strong", {}, "Time"), key("k-turn", "turns"), key("k-model", "model calls"), key("k-tool s-ok", "tool calls, side by side on lanes"), key("k-tool background", "after its turn ended"), this.note),
      this.bars,
      this.scale,
    );
    this.bars.addEventListener("click", (e) => {
      const bar = e.target.closest?.("[data-index]");
      if (bar) onPick(Number(bar.dataset.index));
    });
  }

  /** Whether anything on the axis is still open (it grows with the clock). */
  get live() {
    return this.open;
  }

  draw(t) {
    const all = t.spans;
    const items = all.slice(-AXIS_MAX_BARS);
    this.note.textContent = items.length < all.length ? `the last ${items.length} of ${all.length} turns and calls` : "";
    if (items.length === 0) return void this.bars.replaceChildren();
    const now = Date.now();
    const endOf = (i) => i.endAt ?? (i.status === "running" || i.status === "pending" ? now : i.at);
    this.open = items.some((i) => i.endAt === undefined && (i.status === "running" || i.status === "pending"));
    const t0 = Math.min(...items.map((i) => i.at));
    const t1 = Math.max(t0 + 1, ...items.map(endOf));
    const x = (ms) => ((ms - t0) / (t1 - t0)) * 100;
    // Lanes: turns on the first, then model calls, then tool calls, each group packed so that what
    // overlaps in time sits on lanes of its own.
    let lane = 0;
    const bars = [];
    for (const kind of ["turn", "model", "tool"]) {
      const ends = [];
      for (const i of items.filter((x) => x.kind === kind)) {
        let l = ends.findIndex((end) => end <= i.at);
        if (l < 0) l = ends.push(0) - 1;
        ends[l] = endOf(i) + 1;
        bars.push(this.bar(i, lane + l, x, endOf(i)));
      }
      lane += Math.max(ends.length, 0);
    }
    this.bars.style.height = `${lane * LANE_H}px`;
    this.bars.replaceChildren(...bars);
    this.scale.replaceChildren(h("span", {}, fmtTime(t0)), h("span", {}, `+${fmtDur(t1 - t0)}`));
  }

  bar(i, lane, x, end) {
    const status = i.kind === "tool" && awaitingApproval(i) ? "approval" : i.status;
    const name = i.kind === "turn" ? turnName(i) : i.kind === "model" ? `model call #${i.seq}` : `${i.tool} ${i.callId}`;
    const left = x(i.at);
    const bar = h("div", {
      class: `bar k-${i.kind} s-${status}${i.background ? " background" : ""}`,
      style: `left:${left}%;width:max(${x(end) - left}%, 3px);top:${lane * LANE_H}px`,
      title: `${name} · ${fmtDur(end - i.at)} · ${i.kind === "tool" ? callStatusText(i) : status}${i.background ? " · background: it outlived its turn" : ""}`,
      dataset: { index: String(i.index), axisKind: i.kind, axisCall: i.callId, axisTurn: i.kind === "turn" ? String(i.seq) : undefined },
    });
    // A background call: the part after its turn ended is hatched.
    if (i.background && i.turnEndAt !== undefined && end > i.turnEndAt) {
      const from = ((i.turnEndAt - i.at) / Math.max(1, end - i.at)) * 100;
      bar.append(h("span", { class: "past-turn", style: `left:${from}%` }));
    }
    return bar;
  }
}

/** Reasons typed for calls awaiting approval, kept across redraws of the panels that show them. */
const reasons = new Map();

/**
 * Approve and Deny for one call awaiting approval, with an optional reason (journaled; for a denial
 * the model reads it). The clicks are handled by the session page (data-approve / data-deny).
 */
function approvalControls(c) {
  const id = `reason-${c.seq}`;
  const reason = h("input", { type: "text", id, class: "reason", placeholder: "Reason (optional; the model reads a denial's)", value: reasons.get(c.callId) ?? "", dataset: { reasonFor: c.callId } });
  reason.addEventListener("input", () => reasons.set(c.callId, reason.value));
  return h(
    "div",
    { class: "approval", dataset: { approvalFor: c.callId } },
    h("label", { for: id, class: "sr-only" }, `Reason for ${c.tool} (${c.callId})`),
    reason,
    h("button", { type: "button", class: "approve", dataset: { approve: c.callId } }, "Approve"),
    h("button", { type: "button", class: "danger", dataset: { deny: c.callId } }, "Deny"),
  );
}

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

route();
