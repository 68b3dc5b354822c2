/**
 * The MCP wire, in one file: every other runtime file speaks MCP through what this one exports, so
 * the next MCP revision (or SDK major) is one change here. `@modelcontextprotocol/sdk` 1.x implements
 * it; Brain targets revision MCP_REVISION (the SDK also answers clients that ask for an older one).
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ErrorCode, SetLevelRequestSchema, LATEST_PROTOCOL_VERSION, ListToolsRequestSchema, McpError, isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { CallToolResult, LoggingLevel, ServerNotification, Tool } from "@modelcontextprotocol/sdk/types.js";

export { Server, StreamableHTTPServerTransport, CallToolRequestSchema, SetLevelRequestSchema, ListToolsRequestSchema, McpError, ErrorCode, isInitializeRequest };
export type { CallToolResult, LoggingLevel, ServerNotification, Tool };

/** The MCP revision Brain's endpoint targets (the SDK's newest): docs/mcp.md. */
export const MCP_REVISION: string = LATEST_PROTOCOL_VERSION;
