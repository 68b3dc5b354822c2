import type { ToolContract } from "@aexhq/brain-protocol";
import { validateSchema } from "../json-schema.ts";
import { failure } from "../json-answer.ts";
import type { JsonOutcome } from "../json-answer.ts";
import { JSONRPC, WireError } from "./wire-types.ts";
import type { WireResult } from "./wire-types.ts";

/** How a call ends from what the server answered: the outcome, and the text content journaled with it. */
export interface McpEnd {
  outcome: JsonOutcome;
  content?: string;
}

// The first characters of an error result's text become the error's message.
const MESSAGE_CHARS = 1000;

/** The text of a result's `text` content blocks, one per line; undefined when there is none. */
function textOf(content: readonly unknown[]): string | undefined {
  // A loop, not flatMap and join: a result is usually one text block, which needs no array at all.
  let text: string | undefined;
  for (const c of content) {
    const t = (c as { type?: unknown; text?: unknown } | null | undefined)?.type === "text" ? (c as { text?: unknown }).text : undefined;
    if (typeof t === "string") text = text === undefined ? t : `${text}\n${t}`;
  }
  return text;
}

/** How an outcome's message names the tool. */
export function whereOf(placement: { tool: string; server: string }): string {
  return `MCP tool ${placement.tool} on server ${placement.server}`;
}

/**
 * A `tools/call` result as a Brain outcome (docs/mcp.md has the table):
 * - `isError: true` → error `tool_error`, its text as the message, content and structuredContent in details;
 * - with an outputSchema → `structuredContent` is the value, checked against it (missing or not
 *   matching: `invalid_output`);
 * - without → `structuredContent` when sent, else the content blocks as they are.
 * The text content is journaled with the result either way.
 */
export function resultEnd(r: WireResult, contract: ToolContract, placement: { tool: string; server: string }): McpEnd {
  const text = textOf(r.content);
  if (!r.isError && contract.outputSchema === undefined) {
    // The common case: no message naming the tool is made, and no spread.
    const outcome = { status: "ok" as const, value: (r.structuredContent ?? r.content) as unknown };
    return text === undefined ? { outcome } : { outcome, content: text };
  }
  const where = whereOf(placement);
  const content = text === undefined ? {} : { content: text };
  if (r.isError) {
    const details = { content: r.content, ...(r.structuredContent === undefined ? {} : { structuredContent: r.structuredContent }) };
    return { outcome: failure("tool_error", text === undefined || text === "" ? `${where} reported an error` : text.slice(0, MESSAGE_CHARS), details), ...content };
  }
  // A success with an outputSchema (the case without one was answered first).
  if (r.structuredContent === undefined) return { outcome: failure("invalid_output", `${where} has an outputSchema but its result has no structuredContent`, { content: r.content }), ...content };
  const issues = validateSchema(contract.outputSchema, r.structuredContent);
  if (issues.length > 0) return { outcome: failure("invalid_output", `${where}: structuredContent does not match the tool's outputSchema`, issues), ...content };
  return { outcome: { status: "ok", value: r.structuredContent }, ...content };
}

/**
 * A failed `tools/call` request: a JSON-RPC error the server answered is an error outcome (the
 * server refused it); a malformed answer is `invalid_output`; a request the server says it did not
 * process (`gone`) is `unavailable`. Anything else (connection or process
 * gone, a send that failed) means the server may have acted: the caller reports `unknown`
 * (undefined here).
 */
export function requestErrorEnd(e: unknown, where: string): McpEnd | undefined {
  if (!(e instanceof WireError)) return undefined;
  if (e.reason === "malformed") return { outcome: failure("invalid_output", `${where} answered with something that is not a CallToolResult`) };
  // The server said it did not process the request (HTTP 404 for the MCP session, on a new session too).
  if (e.reason === "gone") return { outcome: failure("unavailable", `${where}: ${e.message}`, undefined, true) };
  if (e.reason !== "server") return undefined;
  const details = { jsonrpcCode: e.code, ...(e.data === undefined ? {} : { data: e.data }) };
  if (e.code === JSONRPC.invalidParams) return { outcome: failure("invalid_input", `${where} refused the call: ${e.message}`, details) };
  if (e.code === JSONRPC.methodNotFound) return { outcome: failure("unsupported", `${where}: the server does not serve tools/call (${e.message})`, details) };
  return { outcome: failure("tool_error", `${where} answered a JSON-RPC error: ${e.message}`, details) };
}
