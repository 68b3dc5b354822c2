import { z } from "zod";
import type { McpServerTools, ToolContract } from "@aexhq/brain-protocol";
import type { DeclaredTool, PlacedToolSpec } from "../tool.ts";
import { mcpEnv } from "../env.ts";
import { SdkError } from "../errors.ts";
import type { HttpClient } from "./http.ts";

/** What `brain.mcpTools` takes. */
export interface McpToolsOptions {
  /** The operator's name for the MCP server (BRAIN_MCP_SERVERS on the Brain server). */
  server: string;
  /** The server's tool names (MCP names) to place; absent: every tool the server lists that Brain can place. */
  include?: readonly string[];
  /** `"always"`: these tools' calls wait for a person's approval. */
  approval?: "always";
}

/**
 * A tool of an MCP server as the SDK places it: the contract is the server's, as the Brain server
 * lists it (its schemas are the server's inputSchema/outputSchema); the SDK never runs it, so its
 * zod input is `unknown` (Brain checks the input against the server's schema).
 */
function declared(contract: ToolContract): DeclaredTool {
  return Object.freeze({
    name: contract.name,
    description: contract.description,
    input: z.unknown(),
    output: undefined,
    options: undefined,
    run: undefined,
    implementation: undefined,
    inputSchema: contract.inputSchema,
    outputSchema: contract.outputSchema,
    optionsSchema: undefined,
    approval: undefined,
    contract: () => Promise.resolve(contract),
  });
}

/**
 * The tools of MCP server `server`, ready for `sessions.create({ tools })`: asks the Brain server
 * (GET /v1/mcp-servers/:server/tools), which starts or reaches the MCP server. An `include` name the
 * server does not list is an SdkError `not_found`; one Brain cannot place (a schema it cannot
 * check), `unsupported` with the reason.
 */
export async function listMcpTools(http: HttpClient, o: McpToolsOptions): Promise<PlacedToolSpec[]> {
  if (typeof o !== "object" || o === null || typeof o.server !== "string") throw new TypeError("mcpTools takes { server, include?, approval? }");
  const env = mcpEnv({ name: o.server });
  if (o.include !== undefined && (!Array.isArray(o.include) || o.include.some((n) => typeof n !== "string"))) throw new TypeError(`mcpTools ${o.server}: include must be an array of the server's tool names`);
  if (o.approval !== undefined && o.approval !== "always") throw new TypeError(`mcpTools ${o.server}: approval must be "always" or absent`);
  const listed = await http.request<McpServerTools>("GET", `/v1/mcp-servers/${encodeURIComponent(o.server)}/tools`);
  const wanted = o.include === undefined ? listed.tools.map((t) => t.tool) : [...new Set(o.include)];
  return wanted.map((name) => {
    const found = listed.tools.find((t) => t.tool === name);
    if (found === undefined) {
      const skipped = listed.skipped.find((s) => s.tool === name);
      if (skipped !== undefined) throw new SdkError("unsupported", `MCP server ${o.server}'s tool ${name} cannot be placed: ${skipped.reason}`, { server: o.server, tool: name });
      throw new SdkError("not_found", `MCP server ${o.server} lists no tool ${JSON.stringify(name)} (it lists ${listed.tools.map((t) => t.tool).join(", ") || "none"})`, { server: o.server, tool: name });
    }
    return Object.freeze({ tool: declared(found.contract), options: {}, env, mcpTool: found.tool, ...(o.approval === undefined ? {} : { approval: o.approval }) });
  });
}
