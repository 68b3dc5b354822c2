// @ts-check
// The operator's API keys page (/ui/keys): every key (GET /v1/keys), live or revoked, with when it
// was made and the limits that apply to it. Read only: keys are made and revoked with `brain keys`
// or the API, whose answer shows a new key's secret once.
import { h, badge, fmtTime } from "./dom.js";
import { api, knownKeyNames } from "./api.js";
import { main, crumbs, redraw } from "./nav.js";

/** @param {Record<string, number> | undefined} limits */
function limitsText(limits) {
  const set = Object.entries(limits ?? {});
  return set.length === 0 ? "unlimited" : set.map(([k, v]) => `${k} ${v.toLocaleString("en")}`).join(" · ");
}

export async function showKeys() {
  document.title = "API keys · Brain";
  crumbs.replaceChildren("API keys");
  main.replaceChildren(h("h1", {}, "API keys"), h("p", { class: "muted" }, "Loading…"));
  let list;
  try {
    list = await api("/v1/keys");
  } catch (e) {
    main.replaceChildren(h("h1", {}, "API keys"), h("p", { class: "err-box", role: "alert", id: "keys-error" }, e.status === 403 ? "Only the operator token lists API keys (403 forbidden)." : `Could not list keys: ${e.message} (${e.status ?? ""} ${e.code ?? ""})`));
    return;
  }
  const keys = list.keys;
  knownKeyNames(new Map(keys.map((/** @type {any} */ k) => [k.id, k.name])));
  const live = keys.filter((/** @type {any} */ k) => k.revokedAt === undefined).length;
  const rows = keys.map((/** @type {any} */ k) =>
    h(
      "tr",
      { dataset: { key: k.id, revoked: String(k.revokedAt !== undefined) } },
      h("td", { class: "mono" }, k.id),
      h("td", {}, k.name),
      h("td", { title: k.revokedAt === undefined ? undefined : `revoked ${fmtTime(Date.parse(k.revokedAt))}` }, k.revokedAt === undefined ? badge("ok", "live") : badge("error", "revoked")),
      h("td", { class: "wide" }, fmtTime(Date.parse(k.createdAt))),
      h("td", { class: "wide" }, k.revokedAt === undefined ? "—" : fmtTime(Date.parse(k.revokedAt))),
      h("td", { class: "limits", dataset: { limits: k.id }, title: k.limits ? `set on the key: ${limitsText(k.limits)}` : "the server-wide defaults" }, limitsText(k.effectiveLimits)),
    ),
  );
  main.replaceChildren(
    h("h1", {}, "API keys"),
    h("div", { class: "toolbar" }, h("span", { id: "keys-count", role: "status" }, `${keys.length} keys, ${live} live`), h("button", { type: "button", onclick: () => redraw() }, "Refresh"), h("span", { class: "muted" }, "Made and revoked with brain keys or POST / DELETE /v1/keys.")),
    h(
      "table",
      { class: "sessions", id: "keys" },
      h("thead", {}, h("tr", {}, ...[["Key"], ["Name"], ["State"], ["Created", "wide"], ["Revoked", "wide"], ["Limits"]].map(([c, cls]) => h("th", { scope: "col", class: cls }, c)))),
      h("tbody", {}, ...(rows.length > 0 ? rows : [h("tr", {}, h("td", { colspan: "6", class: "muted" }, "No API key yet: the operator token is the only credential."))])),
    ),
  );
}
