import type { IncomingMessage, ServerResponse } from "node:http";
import type { HostInfo, HostList, HostSummary } from "@aexhq/brain-protocol";
import type { HostRegistry } from "../hosts/registry.ts";
import type { HostEnvironment } from "./host.ts";
import type { SessionManager } from "../sessions/manager.ts";
import type { HostRow, JournalStore } from "../journal/store.ts";
import { BrainRuntimeError } from "../errors.ts";
import { sendJson } from "../http/respond.ts";
import { decodeSegment } from "../http/path.ts";
import { everySession } from "../http/sessions-list.ts";
import { OPERATOR, maySee } from "../credentials/keys.ts";
import type { Principal } from "../credentials/keys.ts";

/**
 * GET /v1/hosts: every registered host with its connection state, for the operator (its hosts page
 * at /ui/hosts). An API key gets 403: the list names every key's hosts; it reads its own with
 * GET /v1/hosts/:id. Connection state: connected here, or (a node of several) to which live node
 * (`host_links`); the last sign of life as this node saw it.
 *
 * GET /v1/hosts/:id: a registered host's contracts, connection and placed sessions. The operator
 * sees every host; an API key only the hosts registered under it (others are 404) and, of their
 * sessions, its own. The placed sessions are found by paging through every session the principal
 * may see (O(sessions): no index says which sessions a host serves).
 */
export function hostsRoute(registry: HostRegistry, hosts: HostEnvironment, sessions: SessionManager, store: JournalStore) {
  return async (req: IncomingMessage, res: ServerResponse, url: URL, principal: Principal = OPERATOR): Promise<boolean> => {
    if (url.pathname.replace(/\/+$/, "") === "/v1/hosts") {
      if (req.method !== "GET") throw new BrainRuntimeError("not_found", `no route ${req.method} ${url.pathname}`);
      if (principal.kind !== "operator") throw new BrainRuntimeError("forbidden", "only the operator token lists every host; an API key reads its own with GET /v1/hosts/:id");
      // Every node lists every host: registrations made through other nodes are read first.
      await hosts.refresh();
      const nodes = await hosts.nodes();
      const body: HostList = { hosts: registry.all().map((row) => hostSummary(row, hosts, nodes)) };
      sendJson(res, 200, body);
      return true;
    }
    const m = /^\/v1\/hosts\/([^/]+)\/?$/.exec(url.pathname);
    if (!m) return false;
    if (req.method !== "GET") throw new BrainRuntimeError("not_found", `no route ${req.method} ${url.pathname}`);
    const hostId = decodeSegment(m[1]!, "host");
    const row = registry.get(hostId);
    if (!row || !maySee(principal, row.owner)) throw new BrainRuntimeError("not_found", `no host ${hostId}`);
    const placed: string[] = [];
    for await (const s of everySession(store, sessions, principal)) if (s.tools.some((t) => t.placement.kind === "host" && t.placement.hostId === hostId)) placed.push(s.id);
    const body: HostInfo = { hostId, connected: hosts.isConnected(hostId), tools: row.contracts, sessions: placed };
    sendJson(res, 200, body);
    return true;
  };
}

function hostSummary(row: HostRow, hosts: HostEnvironment, nodes: Map<string, string> | undefined): HostSummary {
  const node = nodes?.get(row.hostId);
  const s: HostSummary = { hostId: row.hostId, registeredAt: new Date(row.registeredAt).toISOString(), tools: [...new Set(row.contracts.map((c) => c.name))], connected: hosts.isConnected(row.hostId) || node !== undefined };
  if (row.owner !== undefined) s.owner = row.owner;
  if (node !== undefined) s.node = node;
  const seen = hosts.lastSeenAt(row.hostId);
  if (seen !== undefined) s.lastSeenAt = new Date(seen).toISOString();
  return s;
}
