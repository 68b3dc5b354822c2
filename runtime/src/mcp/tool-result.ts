import type { Outcome, ToolContract } from "@aexhq/brain-protocol";
import type { CallToolResult, Tool } from "./sdk.ts";

/**
 * How Brain's tools and outcomes look to an MCP client (docs/decisions/mcp-server.md, docs/mcp.md).
 * `_meta` of every result names the journaled call and its outcome under META_PREFIX, so a client
 * tells `timeout`, `cancelled` and `unknown` apart from a tool's own error (all are `isError`).
 */
export const META_PREFIX = "aexhq.brain/";

/**
 * A placed tool as an MCP tool: its name, description and input schema; its output schema only when
 * it describes an object (MCP requires `type: "object"`), else the value travels as text only.
 */
export function mcpTool(contract: ToolContract): Tool {
  const tool: Tool = { name: contract.name, description: contract.description, inputSchema: contract.inputSchema as Tool["inputSchema"] };
  if (describesObject(contract.outputSchema)) tool.outputSchema = contract.outputSchema as Tool["outputSchema"];
  return tool;
}

/** Whether MCP can take `schema` as a tool's input or output schema (a JSON Schema of `type: "object"`). */
export function describesObject(schema: Record<string, unknown> | undefined): boolean {
  return schema !== undefined && schema.type === "object";
}

/**
 * A finished call's Outcome as an MCP CallToolResult:
 * - ok: its text `content` (the tool's model-facing text; else a string value as it is, any other
 *   value as JSON), and the value as
 *   `structuredContent` when the tool advertises an object output schema;
 * - error: `isError`, the content or `code: message`, the ErrorInfo in `_meta`;
 * - timeout, cancelled, unknown: `isError`, `status: message`, the status in `_meta`.
 */
export function callToolResult(callId: string, outcome: Outcome, content: string | undefined, contract: ToolContract): CallToolResult {
  const meta: Record<string, unknown> = { [`${META_PREFIX}callId`]: callId, [`${META_PREFIX}status`]: outcome.status };
  if (outcome.status === "ok") {
    const text = content ?? (typeof outcome.value === "string" ? outcome.value : JSON.stringify(outcome.value));
    const result: CallToolResult = { content: [{ type: "text", text }], _meta: meta };
    if (describesObject(contract.outputSchema) && isPlainObject(outcome.value)) result.structuredContent = outcome.value;
    return result;
  }
  if (outcome.status === "error") {
    meta[`${META_PREFIX}error`] = outcome.error;
    return { isError: true, content: [{ type: "text", text: content ?? `${outcome.error.code}: ${outcome.error.message}` }], _meta: meta };
  }
  if (outcome.message !== undefined) meta[`${META_PREFIX}message`] = outcome.message;
  return { isError: true, content: [{ type: "text", text: `${outcome.status}: ${outcome.message ?? STATUS_TEXT[outcome.status]}` }], _meta: meta };
}

const STATUS_TEXT = {
  timeout: "the call's deadline passed; the tool may have done part of its work",
  cancelled: "the call was cancelled; the tool may have done part of its work",
  unknown: "the tool's connection was lost after the call was sent; whether it ran is unknown (it is never re-sent)",
} as const;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
