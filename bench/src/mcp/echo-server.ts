// The MCP peer: the same trivial echo tool served by @modelcontextprotocol/sdk.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";

export function mcpEchoServer(): McpServer {
  const server = new McpServer({ name: "bench-echo", version: "1.0.0" });
  server.registerTool("echo", { description: "Echo the input.", inputSchema: { x: z.number() } }, async (input) => ({
    content: [{ type: "text", text: JSON.stringify(input) }],
  }));
  return server;
}
