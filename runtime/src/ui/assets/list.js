// @ts-check
// The sessions list (/ui): one page at a time with More, the state filter, search, the sessions
// waiting for approval above it, and per row what tells a session apart (its first message, tools,
// owner key, last activity and last outcome).
import { h, badge, plural, modelLabel, fmtTime, ago } from "./dom.js";
import { api, keyNames, OPERATOR } from "./api.js";
import { main, crumbs, navigate, onLeave, redraw } from "./nav.js";

const PAGE_SIZE = 25;
/** The list's columns and their classes: `wide` ones give way on a narrow screen (app.css). */
const COLUMNS = [["Session"], ["State"], ["Tools", "tools"], ["Owner"], ["Model", "wide"], ["Created", "wide"], ["Last activity", "wide"], ["Open calls", "num"], ["Approvals", "num"]];

export async function showList() {
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
    // The owner key's name is the operator's column (an API key sees its own sessions only).
    h("thead", {}, h("tr", {}, ...COLUMNS.filter(([c]) => OPERATOR || c !== "Owner").map(([c, cls]) => h("th", { scope: "col", class: cls }, c)))),
    tbody,
  );
  // The first page now; each press of More reads the next one (GET /v1/sessions?cursor=<next>) and appends it.
  const more = h("button", { type: "button", id: "more", hidden: true, onclick: () => void load() }, "More");
  const count = h("span", { class: "muted", id: "list-count", role: "status" });
  const failure = h("div");
  // Search the sessions shown by id, first message or tool; Enter on a whole id opens that session.
  const search = h("input", { type: "search", id: "search", placeholder: OPERATOR ? "Search id, message, tool, owner" : "Search by id, message or tool", autocomplete: "off" });
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
    h("div", { class: "toolbar" }, h("label", { for: "search", class: "sr-only" }, "Search"), search, h("label", { for: "state-filter" }, "State"), filter, h("button", { type: "button", onclick: () => redraw() }, "Refresh"), h("span", { id: "list-note", class: "muted" }, "Newest first.")),
    table,
    failure,
    h("nav", { class: "pager", "aria-label": "More sessions" }, more, count),
  );
  let alive = true;
  onLeave(() => (alive = false));
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
    if (shown === 0) tbody.append(h("tr", {}, h("td", { colspan: String(COLUMNS.length), class: "muted" }, status ? `No ${status} sessions.` : "No sessions yet.")));
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
  const owner = h("td", { dataset: { owner: s.id } }, "…");
  const row = h(
    "tr",
    { dataset: { session: s.id, search: `${s.id} ${s.tools.map((t) => t.contract.name).join(" ")}`.toLowerCase() } },
    h("td", {}, h("a", { href: `/ui/sessions/${encodeURIComponent(s.id)}`, "data-nav": true, class: "mono" }, s.id), first),
    state,
    h("td", { class: "tools" }, s.tools.map((t) => t.contract.name).join(", ") || "—"),
    OPERATOR ? owner : null,
    h("td", { class: "wide" }, modelLabel(s.model)),
    h("td", { class: "wide", title: s.createdAt }, fmtTime(Date.parse(s.createdAt))),
    last,
    h("td", { class: "num" }, String(s.openCalls.length)),
    h("td", { class: "num", dataset: { approvals: s.id }, title: (s.pendingApprovals?.length ?? 0) > 0 ? `${plural(s.pendingApprovals.length, "call")} waiting for approval` : undefined }, (s.pendingApprovals?.length ?? 0) > 0 ? badge("approval", String(s.pendingApprovals.length)) : "0"),
  );
  // Its owner (session.created's `owner`), its first message (record 2 of a session that has one)
  // and its last records: two small reads.
  api(`${path}?after=0&limit=2`)
    .then(async (r) => {
      const [created, m] = r.records;
      if (OPERATOR) {
        const id = created?.data?.owner;
        const name = id === undefined ? undefined : (await keyNames()).get(id);
        owner.replaceChildren(id === undefined ? h("span", { class: "muted" }, "operator") : name ?? h("span", { class: "mono" }, id));
        owner.title = id === undefined ? "made with the operator token" : `API key ${id}`;
        row.dataset.owner = id ?? "";
        row.dataset.search += ` ${(name ?? id ?? "operator").toLowerCase()}`;
      }
      if (m?.type !== "message.user") return;
      first.textContent = m.data.text.length > 80 ? `${m.data.text.slice(0, 80)}…` : m.data.text;
      first.title = m.data.text;
      row.dataset.search += ` ${m.data.text.toLowerCase()}`;
    })
    .catch(() => (owner.textContent = "—")); // the row shows no first message or owner; its id still tells it apart
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
