// @ts-check
// Small pieces every view draws with: h() to build elements, times, durations and sizes in words,
// status badges, long JSON cut with a "Show all" button, and deadline countdowns.

const PREVIEW_CHARS = 600;

/** h("div", {class: "x", onclick: fn, "aria-label": "y"}, child, "text", ...) */
export function h(tag, attrs, ...kids) {
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
export function fmtTime(ms) {
  if (typeof ms !== "number") return "—";
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)} ${zoneOf(d)}`;
}
export function fmtDur(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60_000);
  if (m < 60) return `${m} min ${Math.round((ms % 60_000) / 1000)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}
export function ago(ms) {
  const d = Date.now() - ms;
  return d < 1500 ? "just now" : `${fmtDur(d)} ago`;
}
export function bytes(n) {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
}
export const plural = (n, one, many = `${one}s`) => `${n.toLocaleString("en")} ${n === 1 ? one : many}`;
export function modelLabel(model) {
  if (!model) return "—";
  if (model.provider === "scripted") return `scripted (${plural(model.script?.length ?? 0, "step")})`;
  return `${model.provider} ${model.model ?? ""}`.trim();
}
export function placementLabel(p) {
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
export function badge(status, text = status) {
  return h("span", { class: `badge s-${status}` }, text);
}

/** JSON shown truncated, with a button that expands it in full (and back). */
const expanded = new Set();
export function payload(value, key, label = "payload") {
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
export function deadlineEl(at) {
  const el = h("span", { class: "deadline", dataset: { deadline: String(at) } });
  tickDeadline(el);
  return el;
}
export function tickDeadline(el) {
  const left = Number(el.dataset.deadline) - Date.now();
  el.textContent = left >= 0 ? `deadline in ${fmtDur(left)}` : `deadline passed ${fmtDur(-left)} ago`;
  el.classList.toggle("late", left < 0);
}
