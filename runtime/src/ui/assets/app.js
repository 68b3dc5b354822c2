// Brain session viewer: a plain ES module served by the runtime at /ui/assets/app.js (no build
// step; docs/decisions/ui.md). It reads the ordinary HTTP API with the login cookie: the session
// list (GET /v1/sessions), one session (GET /v1/sessions/:id) and its journal live over SSE
// (GET /v1/sessions/:id/events with Accept: text/event-stream). Nothing is polled.

const ROW_H = 36; // px; every timeline row has this height, so the list is virtualised by arithmetic
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
  for (const kid of kids.flat()) if (kid !== undefined && kid !== null && kid !== false) el.append(kid instanceof Node ? kid : String(kid));
  return el;
}

const pad = (n, w = 2) => String(n).padStart(w, "0");
function fmtTime(ms) {
  if (typeof ms !== "number") return "—";
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
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

// ---------------------------------------------------------------- routing

function navigate(href) {
  history.pushState(null, "", href);
  route();
}
document.addEventListener("click", (e) => {
  const a = e.target.closest?.("a[data-nav]");
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
    h("thead", {}, h("tr", {}, ...["Session", "State", "Model", "Created", "Last activity", "Open calls"].map((c, i) => h("th", { scope: "col", class: i === 5 ? "num" : undefined }, c)))),
    tbody,
  );
  // The first page now; each press of More reads the next one (GET /v1/sessions?cursor=<next>) and appends it.
  const more = h("button", { type: "button", id: "more", hidden: true, onclick: () => void load() }, "More");
  const count = h("span", { class: "muted", id: "list-count", role: "status" });
  const failure = h("div");
  main.replaceChildren(
    h("h1", {}, "Sessions"),
    h("div", { class: "toolbar" }, h("label", { for: "state-filter" }, "State"), filter, h("button", { type: "button", onclick: () => route() }, "Refresh"), h("span", { id: "list-note", class: "muted" }, "Newest first.")),
    table,
    failure,
    h("nav", { class: "pager", "aria-label": "More sessions" }, more, count),
  );
  let alive = true;
  cleanups.push(() => (alive = false));
  let next;
  let shown = 0;
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
    for (const s of page.sessions) tbody.append(sessionRow(s));
    shown += page.sessions.length;
    next = page.next;
    if (shown === 0) tbody.append(h("tr", {}, h("td", { colspan: "6", class: "muted" }, status ? `No ${status} sessions.` : "No sessions yet.")));
    more.hidden = next === undefined;
    more.disabled = false;
    count.textContent = next === undefined ? `${plural(shown, "session")}, all shown` : `${plural(shown, "session")} shown`;
  }
  await load();
}

/** One row of the sessions list. */
function sessionRow(s) {
  const last = h("td", { dataset: { lastActivity: s.id } }, "…");
  // The last record's time: one record read per listed session.
  api(`/v1/sessions/${encodeURIComponent(s.id)}/events?after=${Math.max(0, s.lastSequence - 1)}`)
    .then((r) => {
      const at = r.records.at(-1)?.at;
      last.textContent = at ? ago(at) : "—";
      if (at) last.title = fmtTime(at);
    })
    .catch(() => (last.textContent = "—"));
  return h(
    "tr",
    { dataset: { session: s.id } },
    h("td", {}, h("a", { href: `/ui/sessions/${encodeURIComponent(s.id)}`, "data-nav": true, class: "mono" }, s.id)),
    h("td", {}, badge(s.status)),
    h("td", {}, modelLabel(s.model)),
    h("td", { title: s.createdAt }, fmtTime(Date.parse(s.createdAt))),
    last,
    h("td", { class: "num" }, String(s.openCalls.length)),
  );
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
  }

  push(item) {
    item.index = this.items.length;
    item.version = 0;
    this.items.push(item);
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
        const turn = this.push({ kind: "turn", seq: r.sequence, at: r.at, activation: d.activation, text: d.text, status: "running" });
        this.turns.set(d.activation, turn);
        break;
      }
      case "turn.started": {
        let turn = this.turns.get(d.activation);
        if (d.cause === "wake" || !turn || turn.status !== "running") {
          turn = this.push({ kind: "turn", seq: r.sequence, at: r.at, activation: d.activation, wake: true, status: "running" });
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
          if (c.activation === d.activation && c.status === "running" && !c.background) {
            c.background = true;
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
        this.calls.set(d.callId, c);
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
  get running() {
    for (const t of this.turns.values()) if (t.status === "running") return true;
    return false;
  }
}

function callStatusText(c) {
  if (c.status === "error") return `error · ${c.error?.code ?? "error"}`;
  return c.status;
}

/** The compact row of one item: [seq, icon, what, right side]. */
function rowParts(item) {
  switch (item.kind) {
    case "session":
      return ["◆", `Session created · ${modelLabel(item.data.model)} · ${plural(item.data.tools?.length ?? 0, "tool")}`, [h("span", { class: "muted" }, fmtTime(item.at))]];
    case "turn":
      return [
        "▶",
        item.wake ? `Turn ${item.activation} (woken by a background result)` : `Turn ${item.activation}: “${item.text}”`,
        [item.endAt ? h("span", { class: "muted" }, fmtDur(item.endAt - item.at)) : null, badge(item.status === "completed" ? "completed" : item.status, item.status)],
      ];
    case "turnEnd":
      return ["■", item.status === "completed" ? `Turn ${item.activation} answered: “${item.text}”` : `Turn ${item.activation} failed: ${item.error?.code}: ${item.error?.message}`, [badge(item.status)]];
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
          badge(item.status, callStatusText(item)),
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
        h("h2", {}, `Turn ${t.activation}`),
        facts([["State", badge(t.status)], ["Started", fmtTime(t.at)], t.endAt && ["Ended", fmtTime(t.endAt)], t.endAt && ["Duration", fmtDur(t.endAt - t.at)], ["Cause", t.wake ? "a background result (wake)" : "a user message"]]),
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
      return toolDetail(item, facts, key, timeline);
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
    if (s.type === "intent") step("ok", `Intent committed, sent to ${placementLabel(c.placement)}`, s.at, s.seq, h("div", { class: "help" }, "The runtime sends the invoke once, right after this commit; it is never re-sent."));
    else if (s.type === "event") step("", `Event “${s.kind}”`, s.at, s.seq, payload(s.data, key(`event-${s.seq}`), `event ${s.kind}`));
    else if (s.type === "result") step(s.outcome?.status === "ok" ? "ok" : "bad", `Result · ${s.outcome?.status ?? "?"}`, s.at, s.seq, payload(s.outcome, key(`result-${s.seq}`), "result outcome"), s.content !== undefined ? [h("div", { class: "help" }, "content (what the model reads):"), payload(s.content, key(`content-${s.seq}`), "result content")] : null);
    else if (s.type === "returned") step("", "Returned", s.at, s.seq, h("div", { class: "help" }, c.status === "running" ? "run() ended without finishing: the call continues in the background." : "run() ended before the call finished."));
    else if (s.type === "environment") {
      const what = `ctx.environments.${s.request?.operation ?? "?"}${s.request?.name !== undefined ? ` ${s.request.name}` : s.request?.spec?.name !== undefined ? ` ${s.request.spec.name}` : ""}`;
      const state = s.status === "pending" ? "waiting" : s.status === "ok" ? (s.result?.callId ? `nested call ${s.result.callId}` : "done") : `refused · ${s.error?.code ?? "?"}`;
      step(s.status === "error" ? "bad" : s.status === "ok" ? "ok" : "", `${what} · ${state}`, s.at, s.seq, payload(s.request, key(`env-${s.seq}`), "environment request"), s.error ? payload(s.error, key(`env-error-${s.seq}`), "error") : null);
    } else if (s.type === "finished") step(s.status === "ok" ? "ok" : "bad", `Finished · ${s.status}${s.error ? ` · ${s.error.code}` : ""}`, s.at, s.seq, s.message ? h("div", {}, s.message) : null, s.error ? payload(s.error, key(`error-${s.seq}`), "error") : null);
  }
  if (c.status === "running") life.append(h("li", { class: "open" }, h("div", { class: "life-head" }, h("strong", {}, "Open"), typeof c.deadlineAt === "number" ? deadlineEl(c.deadlineAt) : h("span", { class: "muted" }, "no deadline"))));
  return [
    h("h2", {}, `Tool call ${c.tool}`),
    facts([
      ["State", [badge(c.status, callStatusText(c)), c.background ? [" ", h("span", { class: "badge bg-tag" }, "background")] : null]],
      ["Call id", h("span", { class: "mono" }, c.callId)],
      c.origin ? ["Started by", [h("span", { class: "mono" }, c.origin), " (ctx.environments.call: a nested call, not the model's)"]] : ["Model call id", h("span", { class: "mono" }, c.modelCallId)],
      ["Runs on", placementLabel(c.placement)],
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
    this.el = h(
      "div",
      {},
      h("div", { class: "summary" }, h("h1", {}, session.id), this.status, h("span", {}, modelLabel(session.model)), h("span", { class: "muted" }, `created ${fmtTime(Date.parse(session.createdAt))}`), this.counts, h("label", {}, this.follow, " follow new records"), this.live),
      h("div", { class: "split" }, this.rows, this.detail),
    );
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
    this.resize = new ResizeObserver(() => this.schedule());
    this.resize.observe(this.rows);
    this.ticker = setInterval(() => {
      for (const el of document.querySelectorAll(".deadline[data-deadline]")) tickDeadline(el);
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
            dataset: { row: String(i), kind: item.kind, seq: String(item.seq), call: item.callId, status: item.status },
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
    // The selected item's details follow its new records.
    const sel = items[this.selected];
    if (sel && sel.version !== this.shownVersion) this.showDetail();
    t.changed.clear();
    if (!this.firstScreen && n > 0 && (n * ROW_H >= height || rows.length === n)) {
      this.firstScreen = true;
      performance.mark("brain:first-screen", { detail: { rows: rows.length, items: n } });
    }
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
