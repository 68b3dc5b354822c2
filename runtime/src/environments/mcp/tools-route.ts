import type { IncomingMessage, ServerResponse } from "node:http";
import type { McpServerTools } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../../errors.ts";
import { sendJson } from "../../http/respond.ts";
import { decodeSegment } from "../../http/path.ts";
import type { McpEnvironment } from "./environment.ts";
import { listContracts } from "./contract.ts";

/**
 * GET /v1/mcp-servers/:name/tools: what the application places (McpServerTools). Any principal may
 * ask: the server's tool list is what its sessions would see anyway, and nothing of the server's
 * definition (command, URL, credentials) is in it. An undefined name is 404, like any unknown thing.
 */
export function mcpToolsRoute(env: McpEnvironment) {
  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> => {
    const m = /^\/v1\/mcp-servers\/([^/]+)\/tools\/?$/.exec(url.pathname);
    if (!m) return false;
    if (req.method !== "GET") throw new BrainRuntimeError("not_found", `no route ${req.method} ${url.pathname}`);
    const name = decodeSegment(m[1]!, "MCP server");
    const server = env.server(name);
    if (server === undefined) throw new BrainRuntimeError("not_found", `no MCP server ${name}`, { server: name });
    const { tools, skipped } = listContracts(await server.tools());
    const body: McpServerTools = { server: name, tools, skipped };
    sendJson(res, 200, body);
    return true;
  };
}
