// @ts-check (tsconfig.ui.json; runtime/test/ui-script.test.ts runs it)
// Brain session viewer: plain ES modules served by the runtime under /ui/assets/ (no build step;
// docs/decisions/ui.md). They read the ordinary HTTP API with the login cookie: the session list
// (GET /v1/sessions), one session (GET /v1/sessions/:id) and its journal live over SSE (GET
// /v1/sessions/:id/events with Accept: text/event-stream), and for the operator the hosts (GET
// /v1/hosts) and API keys (GET /v1/keys). Nothing is polled.
//
// This module routes and switches the theme; each view is its own module: list.js (sessions),
// session.js (one session: timeline.js folds its journal with journal-rules.js, the runtime's own
// rules; rows.js, axis.js and call-panel.js draw it; actions.js acts on it), hosts.js and keys.js.
import { leave, navigate, setRouter } from "./nav.js";
import { showList } from "./list.js";
import { showSession } from "./session.js";
import { showHosts } from "./hosts.js";
import { showKeys } from "./keys.js";
import { h } from "./dom.js";
import { OPERATOR } from "./api.js";

// The operator's pages (the server says in the page whose login this is; an API key's login sees sessions only).
const pages = /** @type {HTMLElement} */ (document.getElementById("pages"));
const PAGES = OPERATOR ? [["/ui", "Sessions"], ["/ui/hosts", "Hosts"], ["/ui/keys", "Keys"]] : [];
function markPage() {
  const path = location.pathname.replace(/\/+$/, "");
  for (const a of pages.querySelectorAll("a")) {
    const href = a.getAttribute("href") ?? "";
    const here = href === "/ui" ? path === "/ui" || path.startsWith("/ui/sessions") : path === href;
    if (here) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
}
pages.replaceChildren(...PAGES.map(([href, text]) => h("a", { href, "data-nav": true, id: `page-${text.toLowerCase()}` }, text)));

document.addEventListener("click", (e) => {
  const a = /** @type {Element} */ (e.target).closest?.("a[data-nav]");
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(a.getAttribute("href") ?? "/ui");
});
addEventListener("popstate", () => route());

function route() {
  leave();
  markPage();
  const path = location.pathname.replace(/\/+$/, "");
  const m = /^\/ui\/sessions\/([^/]+)$/.exec(path);
  if (m) void showSession(decodeURIComponent(m[1]));
  else if (path === "/ui/hosts") void showHosts();
  else if (path === "/ui/keys") void showKeys();
  else void showList();
}
setRouter(route);

// ---------------------------------------------------------------- theme

const themeButton = /** @type {HTMLButtonElement} */ (document.getElementById("theme"));
/** @param {string | null} theme */
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

route();
