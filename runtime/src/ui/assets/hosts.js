// @ts-check
// The operator's hosts page (/ui/hosts): every registered host (GET /v1/hosts) with its tools, the
// key it belongs to, whether it is connected now (and to which node, on a node of several) and when
// it was last seen. An API key's login is told the page is the operator's (the API answers 403).
import { h, badge, fmtTime, ago } from "./dom.js";
import { api, keyNames } from "./api.js";
import { main, crumbs, redraw } from "./nav.js";

export async function showHosts() {
  document.title = "Hosts · Brain";
  crumbs.replaceChildren("Hosts");
  main.replaceChildren(h("h1", {}, "Hosts"), h("p", { class: "muted" }, "Loading…"));
  let list;
  let names;
  try {
    [list, names] = await Promise.all([api("/v1/hosts"), keyNames()]);
  } catch (e) {
    main.replaceChildren(h("h1", {}, "Hosts"), h("p", { class: "err-box", role: "alert", id: "hosts-error" }, e.status === 403 ? "Only the operator token lists hosts (403 forbidden)." : `Could not list hosts: ${e.message} (${e.status ?? ""} ${e.code ?? ""})`));
    return;
  }
  const hosts = list.hosts;
  const connected = hosts.filter((/** @type {any} */ x) => x.connected).length;
  const rows = hosts.map((/** @type {any} */ x) =>
    h(
      "tr",
      { dataset: { host: x.hostId, connected: String(x.connected) } },
      h("td", { class: "mono" }, x.hostId),
      h("td", { dataset: { owner: x.hostId } }, x.owner === undefined ? h("span", { class: "muted" }, "operator") : [names.get(x.owner) ?? x.owner, " ", h("span", { class: "mono muted wide" }, x.owner)]),
      h("td", { class: "tools" }, x.tools.join(", ") || "—"),
      h("td", { dataset: { connection: x.hostId } }, x.connected ? badge("ok", "connected") : badge("deleted", "not connected"), x.node !== undefined ? [" ", h("span", { class: "muted" }, `on ${x.node}`)] : null),
      h("td", { title: x.lastSeenAt ? fmtTime(Date.parse(x.lastSeenAt)) : undefined }, x.lastSeenAt ? ago(Date.parse(x.lastSeenAt)) : h("span", { class: "muted" }, "not seen by this node")),
      h("td", { class: "wide" }, fmtTime(Date.parse(x.registeredAt))),
    ),
  );
  main.replaceChildren(
    h("h1", {}, "Hosts"),
    h("div", { class: "toolbar" }, h("span", { id: "hosts-count", role: "status" }, `${hosts.length} registered, ${connected} connected`), h("button", { type: "button", onclick: () => redraw() }, "Refresh")),
    h(
      "table",
      { class: "sessions", id: "hosts" },
      h("thead", {}, h("tr", {}, ...[["Host"], ["Key"], ["Tools", "tools"], ["Connection"], ["Last seen"], ["Registered", "wide"]].map(([c, cls]) => h("th", { scope: "col", class: cls }, c)))),
      h("tbody", {}, ...(rows.length > 0 ? rows : [h("tr", {}, h("td", { colspan: "6", class: "muted" }, "No host has registered yet."))])),
    ),
  );
}
