/**
 * Declared tools served to a local MCP client over stdio: `serveMcpStdio({ tools })` in a script an
 * MCP client starts (Claude Desktop, an IDE, the MCP SDK's StdioClientTransport). The script is a
 * Brain host for `tools` and relays the client's requests to the Brain runtime's MCP endpoint
 * (`/v1/mcp`), so every tools/call is a journaled Brain call, exactly as over HTTP: its deadline
 * (`_meta["aexhq.brain/deadlineMs"]`), its events as progress and log notifications, its outcome
 * mapped back (docs/mcp.md). Only `tools` are listed and callable, whatever else the key's hosts serve.
 *
 * This file is the SDK's only import of `@modelcontextprotocol/sdk` (an optional peer dependency:
 * install it to use `@aexhq/brain/mcp`).
 *
 * @module @aexhq/brain/mcp
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, CallToolResultSchema, ErrorCode, ListToolsRequestSchema, LoggingMessageNotificationSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Readable, Writable } from "node:stream";
import type { PlacedToolSpec } from "@aexhq/brain-core";
import { Brain } from "./index.ts";

/** Options of `serveMcpStdio`. */
export interface ServeMcpStdioOptions {
  /** The tools to serve, placed as for a session (`lookup()`), on this process's host. */
  tools: PlacedToolSpec[];
  /** The Brain runtime. Default: BRAIN_URL, else http://127.0.0.1:3210. */
  url?: string;
  /** An API key (or the operator token). Default: BRAIN_TOKEN. */
  token?: string;
  /** The MCP server's name in `initialize`. Default "brain". */
  name?: string;
  /** Where MCP messages come from and go to. Default: process.stdin and process.stdout. */
  stdin?: Readable;
  stdout?: Writable;
}

/** A running stdio MCP server: `close()` ends it, its MCP session and its host connection. */
export interface McpStdioServer {
  close(): Promise<void>;
}

/** setTimeout's largest delay: Brain's deadline, not the relay, bounds a call. */
const NO_RELAY_TIMEOUT = 2 ** 31 - 1;

/** Serves `tools` to the MCP client on stdin/stdout, each call a journaled call of the runtime. */
export async function serveMcpStdio(opts: ServeMcpStdioOptions): Promise<McpStdioServer> {
  const url = opts.url ?? process.env.BRAIN_URL ?? "http://127.0.0.1:3210";
  const token = opts.token ?? process.env.BRAIN_TOKEN;
  if (token === undefined || token === "") throw new Error("serveMcpStdio: no Brain token: pass { token } or set BRAIN_TOKEN");
  const contracts = await Promise.all(opts.tools.map((t) => t.tool.contract()));
  // The runtime's MCP sessions place tools as their hosts registered them, without options (docs/mcp.md).
  const optioned = contracts.filter((c) => c.optionsSchema !== undefined).map((c) => c.name);
  if (optioned.length > 0) throw new Error(`serveMcpStdio: ${optioned.join(", ")} take factory options, which an MCP session cannot give; serve tools declared without options`);
  const names = new Set(contracts.map((c) => c.name));
  const brain = new Brain({ url, token });
  const upstream = new Client({ name: "brain-mcp-stdio", version: "1.0.0" });
  const relay = new StreamableHTTPClientTransport(new URL("/v1/mcp", url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const server = new Server({ name: opts.name ?? "brain", version: "1.0.0" }, { capabilities: { tools: {}, logging: {} } });
  try {
    // The host first: the runtime's MCP session lists the tools connected when it opens.
    await brain.serve(opts.tools);
    await upstream.connect(relay);
  } catch (e) {
    await brain.close();
    throw e;
  }
  // Progress is taken off the relay as it arrives, not through the MCP client's `onprogress`: the
  // client hands notifications to handlers a microtask after it reads them, but ends a request (and
  // forgets its progress handler) at once, so a last progress read together with the result would
  // be dropped. The runtime sends every notification of a call before its result.
  const progressOf = new Map<string, (p: { progress: number; total?: number; message?: string }) => void>();
  let nextToken = 0;
  const onmessage = relay.onmessage;
  relay.onmessage = (m: JSONRPCMessage, extra?: unknown) => {
    if ("method" in m && m.method === "notifications/progress" && !("id" in m)) {
      const p = m.params as { progressToken?: unknown; progress?: unknown; total?: number; message?: string } | undefined;
      const forward = typeof p?.progressToken === "string" ? progressOf.get(p.progressToken) : undefined;
      if (forward !== undefined && typeof p!.progress === "number") {
        forward({ progress: p!.progress, ...(p!.total === undefined ? {} : { total: p!.total }), ...(p!.message === undefined ? {} : { message: p!.message }) });
        return;
      }
    }
    (onmessage as ((m: JSONRPCMessage, extra?: unknown) => void) | undefined)?.(m, extra);
  };
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: (await upstream.listTools()).tools.filter((t) => names.has(t.name)) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    if (!names.has(request.params.name)) throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found: this server serves ${[...names].join(", ")}`);
    const progressToken = request.params._meta?.progressToken;
    const { progressToken: _, ...meta } = request.params._meta ?? {};
    const relayToken = progressToken === undefined ? undefined : `relay-${++nextToken}`;
    if (relayToken !== undefined) progressOf.set(relayToken, (p) => void extra.sendNotification({ method: "notifications/progress", params: { ...p, progressToken: progressToken! } }));
    const params = { ...request.params, _meta: relayToken === undefined ? meta : { ...meta, progressToken: relayToken } };
    // The client's cancellation (extra.signal) is relayed as notifications/cancelled: Brain ends the call `cancelled`.
    try {
      return await upstream.request({ method: "tools/call", params }, CallToolResultSchema, { signal: extra.signal, timeout: NO_RELAY_TIMEOUT });
    } finally {
      if (relayToken !== undefined) progressOf.delete(relayToken);
    }
  });
  // The tools' events as log messages, at the level this client set (the server filters them).
  upstream.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void server.sendLoggingMessage(n.params));
  const stdin = opts.stdin ?? process.stdin;
  await server.connect(new StdioServerTransport(stdin, opts.stdout));
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await server.close();
      // Ends the runtime's MCP session, and so its Brain session (open calls end `cancelled`).
      await relay.terminateSession().catch(() => {
        // Harmless: a runtime that is gone has no session left to end.
      });
      await upstream.close();
      await brain.close();
    })());
  server.onclose = () => void close();
  // The client closed our stdin (it is done with us): end, so the process can exit.
  stdin.once("end", () => void close());
  return { close };
}
