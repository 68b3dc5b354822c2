/**
 * What the rest of this folder knows of the MCP wire: its types, its errors, and `loadWire`, which
 * loads `wire.ts` (the one file of the MCP client that imports `@modelcontextprotocol/sdk`, an
 * optional dependency) at the first connection to an operator's server. A runtime with no MCP
 * server configured never loads the SDK.
 */
import { loadMcp } from "../../mcp/optional.ts";

/** How to reach one server: a process Brain starts (stdio) or a Streamable HTTP endpoint. */
export type WireTarget =
  | { kind: "stdio"; command: string; args: string[]; env: Record<string, string>; cwd: string | undefined }
  | { kind: "http"; url: string; headers: Record<string, string> };

/** One tool as the server lists it (the fields Brain uses). */
export interface WireTool {
  name: string;
  description: string | undefined;
  inputSchema: unknown;
  outputSchema: unknown;
}

/** A `tools/call` result as the server sent it (already checked to be a CallToolResult). */
export interface WireResult {
  content: unknown[];
  structuredContent: Record<string, unknown> | undefined;
  isError: boolean;
}

export interface WireProgress {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * Why a request failed, as the rest of the folder needs to know it:
 * - `closed`: the connection or process ended before the answer (the server may have acted);
 * - `server`: the server answered a JSON-RPC error (`code`, `message`, `data`);
 * - `malformed`: the server answered something that is not a valid result;
 * - `timeout`: the wire's own timer (initialize, or a call's deadline plus its grace) ran out;
 * - `cancelled`: the caller cancelled the request (`WireCall.cancel`);
 * - `transport`: sending failed (for HTTP the request may have arrived);
 * - `gone`: a Streamable HTTP server answered 404 (or 400 naming the session) for the MCP session (it restarted or ended it):
 *   it did not process the request, and the connection needs a new session.
 */
export class WireError extends Error {
  constructor(
    readonly reason: "closed" | "server" | "malformed" | "timeout" | "cancelled" | "transport" | "gone",
    message: string,
    readonly code?: number,
    readonly data?: unknown,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "WireError";
  }
}

/** JSON-RPC codes a server answers that Brain maps to its own codes. */
export const JSONRPC = { invalidParams: -32602, methodNotFound: -32601 } as const;

/**
 * Who waits for one `tools/call`: told of its progress, then exactly once how it ended. Callbacks
 * rather than a promise: the wire calls them as it reads the server's answer, so a call needs no
 * promise, resolver closures or reactions of its own. An answer or a progress notification is
 * delivered from inside the wire's read (in the order the server sent them), a failure found when
 * sending in a later microtask (never from inside `callTool`); none of them may throw.
 */
export interface WireCallee {
  /** The wire's own timer for the request; at or above MAX_TIMER_MS none (the call is bounded by Brain, which cancels it). */
  readonly timeoutMs: number;
  progress(p: WireProgress): void;
  /** The server's result. */
  answered(r: WireResult): void;
  /** The request failed (a WireError: see its reasons), `cancelled` included when Brain cancelled it. */
  failed(e: WireError): void;
}

/** One `tools/call` sent: a way to end it from Brain's side. */
export interface WireCall {
  /** Ends the request (Brain's deadline or a cancellation): sends `notifications/cancelled` and fails the call (`cancelled`). Nothing once it has ended. */
  cancel(reason: string): void;
}

export interface WireConnection {
  /** Every tool, all pages. */
  listTools(timeoutMs: number): Promise<WireTool[]>;
  /** Sends `tools/call` once; never re-sent by this layer. `callee` hears how it goes. */
  callTool(name: string, args: unknown, callee: WireCallee): WireCall;
  /** Called once when the connection or the process ends (after `close` too). */
  onClosed(fn: (why: string) => void): void;
  /** The server's tool list changed (notifications/tools/list_changed). */
  onToolsChanged(fn: () => void): void;
  close(): Promise<void>;
}

// setTimeout's ceiling: an unlimited Brain call must not be cut by the SDK's 60 s default.
export const MAX_TIMER_MS = 2_147_483_647;

/** The MCP client's wire (wire.ts), loaded once; `unavailable` naming the package when the MCP SDK is not installed. */
export function loadWire(server: string): Promise<typeof import("./wire.ts")> {
  return loadMcp(() => import("./wire.ts"), `MCP server ${server}`);
}
