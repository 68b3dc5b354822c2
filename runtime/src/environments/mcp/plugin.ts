import type { EnvironmentPlugin } from "../plugin.ts";
import { VERSION } from "../../http/routes.ts";
import { McpEnvironment } from "./environment.ts";
import { mcpToolsRoute } from "./tools-route.ts";

/**
 * MCP servers as an Environment, with the operator's named servers (startBrain's `mcpServers`; the
 * CLI reads BRAIN_MCP_SERVERS), and the route applications list a server's tools with. Installed
 * even with none defined, so a placement naming an undefined server is refused by name.
 */
export const mcpPlugin: EnvironmentPlugin = {
  name: "mcp",
  install(ctx) {
    const env = new McpEnvironment(ctx.settings.mcpServers, ctx.logger, VERSION);
    ctx.provide("mcp", env);
    ctx.route(mcpToolsRoute(env));
  },
};
