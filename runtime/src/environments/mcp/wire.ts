/**
 * The MCP wire, and the only file of the runtime that imports `@modelcontextprotocol/sdk`: the
 * next MCP revision (or SDK v2) is a change here. Everything else in this folder speaks the small
 * interface below. Targets MCP 2025-11-25 (the SDK's LATEST_PROTOCOL_VERSION; it negotiates down
 * to the revisions the SDK supports, 2025-06-18 included).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, ErrorCode, LATEST_PROTOCOL_VERSION, McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

/** The MCP revision Brain's client asks for in `initialize`. */
export const MCP_PROTOCOL_VERSION: string = LATEST_PROTOCOL_VERSION;

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
 * - `timeout`: the wire's own timer (initialize) ran out;
 * - `transport`: sending failed (for HTTP the request may have arrived).
 */
export class WireError extends Error {
  constructor(
    readonly reason: "closed" | "server" | "malformed" | "timeout" | "transport",
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
export const JSONRPC = { invalidParams: ErrorCode.InvalidParams, methodNotFound: ErrorCode.MethodNotFound } as const;

export interface WireConnection {
  /** Every tool, all pages. */
  listTools(timeoutMs: number): Promise<WireTool[]>;
  /**
   * Sends `tools/call` once. `signal` aborting sends `notifications/cancelled` and rejects (the
   * caller has ended the call by then). Never re-sent by this layer.
   */
  callTool(name: string, args: unknown, o: { signal: AbortSignal; onProgress: (p: WireProgress) => void; timeoutMs: number }): Promise<WireResult>;
  /** Called once when the connection or the process ends (after `close` too). */
  onClosed(fn: (why: string) => void): void;
  /** The server's tool list changed (notifications/tools/list_changed). */
  onToolsChanged(fn: () => void): void;
  close(): Promise<void>;
}

// setTimeout's ceiling: an unlimited Brain call must not be cut by the SDK's 60 s default.
export const MAX_TIMER_MS = 2_147_483_647;

function wireError(e: unknown, what: string): WireError {
  if (e instanceof WireError) return e;
  if (e instanceof McpError) {
    if (e.code === ErrorCode.ConnectionClosed) return new WireError("closed", `${what}: the connection to the server closed`, e.code, undefined, { cause: e });
    if (e.code === ErrorCode.RequestTimeout) return new WireError("timeout", `${what}: no answer in time`, e.code, undefined, { cause: e });
    return new WireError("server", e.message.replace(/^MCP error -?\d+: /, ""), e.code, e.data, { cause: e });
  }
  // The SDK's schema check of the result (zod) failed: the server answered, but not a CallToolResult.
  if (e instanceof Error && Array.isArray((e as { issues?: unknown }).issues)) return new WireError("malformed", `${what}: the server's answer is not a valid MCP result`, undefined, undefined, { cause: e });
  return new WireError("transport", `${what}: ${e instanceof Error ? e.message : String(e)}`, undefined, undefined, { cause: e });
}

/**
 * Connects and initializes within `timeoutMs`. Rejects with a WireError; a process that was
 * started is stopped again. `onStderr` gets the server's stderr lines (stdio).
 */
export async function connect(target: WireTarget, o: { timeoutMs: number; clientName: string; clientVersion: string; onStderr: (line: string) => void }): Promise<WireConnection> {
  const client = new Client({ name: o.clientName, version: o.clientVersion }, { capabilities: {} });
  let transport: Transport;
  let watch: StreamWatch | undefined;
  if (target.kind === "stdio") {
    const t = new StdioClientTransport({ command: target.command, args: target.args, env: target.env, cwd: target.cwd, stderr: "pipe" });
    let buffered = "";
    t.stderr?.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) if (line.trim() !== "") o.onStderr(line);
    });
    transport = t;
  } else {
    watch = new StreamWatch();
    const t = new StreamableHTTPClientTransport(new URL(target.url), { requestInit: { headers: target.headers }, fetch: watch.fetch });
    watch.attach(t);
    transport = t;
  }
  const closedFns: ((why: string) => void)[] = [];
  const changedFns: (() => void)[] = [];
  let closed = false;
  let lastError: string | undefined;
  const fireClosed = (why: string) => {
    if (closed) return;
    closed = true;
    for (const fn of closedFns) fn(why);
  };
  client.onclose = () => fireClosed(lastError ?? "the connection closed");
  client.onerror = (e) => {
    lastError = e.message;
  };
  try {
    await client.connect(transport, { timeout: o.timeoutMs });
  } catch (e) {
    await client.close().catch(() => undefined);
    const err = wireError(e, "initialize");
    if (err.reason === "closed" && lastError !== undefined) throw new WireError("closed", `initialize: ${lastError}`, undefined, undefined, { cause: e });
    // A server that answered with what is not JSON-RPC times out too: say what the transport made of it.
    if (err.reason === "timeout" && lastError !== undefined) throw new WireError("timeout", `initialize: no answer in time; the transport reported: ${lastError}`, undefined, undefined, { cause: e });
    throw err;
  }
  watch?.observe();
  // Progress is taken off the transport synchronously, before the SDK sees it: the SDK hands
  // notifications on a microtask later, after it may already have handled the response that
  // followed on the same read (and dropped the request's progress handler), losing the last ones.
  const progress = new Map<string, (p: WireProgress) => void>();
  let tokens = 0;
  const onmessage = transport.onmessage;
  transport.onmessage = (m: JSONRPCMessage, extra?: unknown) => {
    if ("method" in m && m.method === "notifications/progress" && !("id" in m)) {
      const p = m.params as { progressToken?: unknown; progress?: unknown; total?: unknown; message?: unknown } | undefined;
      const fn = typeof p?.progressToken === "string" ? progress.get(p.progressToken) : undefined;
      if (fn !== undefined && typeof p!.progress === "number") {
        fn({ progress: p!.progress, ...(typeof p!.total === "number" ? { total: p!.total } : {}), ...(typeof p!.message === "string" ? { message: p!.message } : {}) });
      }
      return;
    }
    (onmessage as ((m: JSONRPCMessage, extra?: unknown) => void) | undefined)?.(m, extra);
  };
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    for (const fn of changedFns) fn();
  });
  return {
    async listTools(timeoutMs) {
      const out: WireTool[] = [];
      let cursor: string | undefined;
      do {
        let page;
        try {
          page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs });
        } catch (e) {
          throw wireError(e, "tools/list");
        }
        for (const t of page.tools) out.push({ name: t.name, description: t.description, inputSchema: t.inputSchema, outputSchema: t.outputSchema });
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return out;
    },
    async callTool(name, args, c) {
      const token = `brain-${++tokens}`;
      progress.set(token, c.onProgress);
      try {
        // client.request, not client.callTool: Brain checks structuredContent against the placed
        // contract itself and must not have the SDK refuse a result the server did send.
        const r = await client.request({ method: "tools/call", params: { name, arguments: args as Record<string, unknown>, _meta: { progressToken: token } } }, CallToolResultSchema, {
          signal: c.signal,
          timeout: c.timeoutMs,
        });
        return { content: (r.content ?? []) as unknown[], structuredContent: r.structuredContent as Record<string, unknown> | undefined, isError: r.isError === true };
      } catch (e) {
        throw wireError(e, `tools/call ${name}`);
      } finally {
        progress.delete(token);
      }
    },
    onClosed(fn) {
      if (closed) fn(lastError ?? "the connection closed");
      else closedFns.push(fn);
    },
    onToolsChanged(fn) {
      changedFns.push(fn);
    },
    async close() {
      await client.close().catch(() => undefined);
      fireClosed("closed by Brain");
    },
  };
}

const LOST_MESSAGE = "the server's answer stream ended before the result";

/**
 * Streamable HTTP has no connection whose end ends the requests on it: a POST whose SSE stream
 * ends without the response (the server died, a proxy cut it) would leave the SDK waiting
 * forever. This watches each `tools/call` POST's stream through the transport's `fetch`: when it
 * ends without the response and cannot be resumed (no event id was sent), or when resuming it has
 * failed (the SDK gives up reconnecting), the request is answered locally with ConnectionClosed,
 * which the call reports as `unknown`. A resumable stream is left to the SDK's reconnection
 * (Last-Event-ID), which may still deliver the result.
 */
class StreamWatch {
  /** tools/call requests sent and not answered yet, by JSON-RPC id. */
  private readonly pending = new Set<string | number>();
  /** Those whose stream ended after an event id: the SDK is reconnecting for them. */
  private readonly resuming = new Set<string | number>();
  private transport: StreamableHTTPClientTransport | undefined;

  attach(t: StreamableHTTPClientTransport): void {
    this.transport = t;
  }

  /** Called once the client is connected (its handlers are set): observe answers and give-ups. */
  observe(): void {
    const t = this.transport;
    if (t === undefined) return;
    const onmessage = t.onmessage;
    t.onmessage = (m: JSONRPCMessage, extra?: unknown) => {
      if ("id" in m && ("result" in m || "error" in m)) {
        this.pending.delete(m.id as string | number);
        this.resuming.delete(m.id as string | number);
      }
      (onmessage as ((m: JSONRPCMessage, extra?: unknown) => void) | undefined)?.(m, extra);
    };
    const onerror = t.onerror;
    t.onerror = (e: Error) => {
      onerror?.(e);
      if (/Maximum reconnection attempts/.test(e.message)) for (const id of [...this.resuming]) this.lose(id);
    };
  }

  private lose(id: string | number): void {
    if (!this.pending.has(id)) return;
    this.pending.delete(id);
    this.resuming.delete(id);
    this.transport?.onmessage?.({ jsonrpc: "2.0", id, error: { code: ErrorCode.ConnectionClosed, message: LOST_MESSAGE } } as JSONRPCMessage);
  }

  readonly fetch = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const id = this.callId(init);
    // The transport passes one AbortSignal (its own) to every request, and fetch leaves a listener
    // on it per request until garbage collection: over a long-lived connection they pile up (Node's
    // MaxListenersExceededWarning). Each request gets its own signal, linked to the transport's
    // until the response is read.
    const link = linkedSignal(init?.signal ?? undefined);
    let res: Response;
    try {
      res = await globalThis.fetch(url, { ...init, ...(link.signal === undefined ? {} : { signal: link.signal }) });
    } catch (e) {
      link.unlink();
      throw e;
    }
    if (res.body === null || !(res.headers.get("content-type") ?? "").includes("text/event-stream")) {
      link.unlink();
      return res;
    }
    if (id !== undefined) this.pending.add(id);
    let primed = false;
    let tail = "";
    let over = false;
    const decoder = new TextDecoder();
    const ended = () => {
      if (over) return;
      over = true;
      link.unlink();
      if (id === undefined || !this.pending.has(id)) return;
      if (primed) this.resuming.add(id);
      // Let the SDK read the last events first: the response may be among them.
      else setTimeout(() => this.lose(id), 0);
    };
    const watched = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          const text = tail + decoder.decode(chunk, { stream: true });
          if (/(^|\n)id:/.test(text)) primed = true;
          tail = text.slice(-4);
          controller.enqueue(chunk);
        },
        flush: () => ended(),
      }),
    );
    const reader = watched.getReader();
    // A stream that errors (the socket closed) never flushes: catch that too.
    const forwarded = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        try {
          const { value, done } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (e) {
          ended();
          controller.error(e);
        }
      },
      cancel: (reason) => {
        ended();
        return reader.cancel(reason);
      },
    });
    return new Response(forwarded, { status: res.status, statusText: res.statusText, headers: res.headers });
  };

  private callId(init: RequestInit | undefined): string | number | undefined {
    if (init?.method !== "POST" || typeof init.body !== "string") return undefined;
    try {
      const m = JSON.parse(init.body) as { method?: unknown; id?: unknown };
      return m.method === "tools/call" && (typeof m.id === "number" || typeof m.id === "string") ? m.id : undefined;
    } catch {
      return undefined;
    }
  }
}

/** A signal of its own that aborts with `outer` until `unlink` (undefined when there is no outer signal). */
function linkedSignal(outer: AbortSignal | undefined): { signal: AbortSignal | undefined; unlink(): void } {
  if (outer === undefined) return { signal: undefined, unlink: () => undefined };
  const inner = new AbortController();
  if (outer.aborted) {
    inner.abort(outer.reason);
    return { signal: inner.signal, unlink: () => undefined };
  }
  const onAbort = () => inner.abort(outer.reason);
  outer.addEventListener("abort", onAbort, { once: true });
  return { signal: inner.signal, unlink: () => outer.removeEventListener("abort", onAbort) };
}
