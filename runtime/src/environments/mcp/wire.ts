/**
 * The MCP wire, and the only file of the runtime that imports `@modelcontextprotocol/sdk`: the
 * next MCP revision (or SDK v2) is a change here. Everything else in this folder speaks the small
 * interface of wire-types.ts, and loads this file (so the SDK, an optional dependency) only when an
 * operator's MCP server is first connected. Targets MCP 2025-11-25 (the SDK's LATEST_PROTOCOL_VERSION; it negotiates down
 * to the revisions the SDK supports, 2025-06-18 included).
 *
 * The SDK's `Client` does the session: `initialize` and its negotiation, `tools/list`, pings and
 * requests from the server, notifications. The hot path, `tools/call`, is Brain's own JSON-RPC on
 * the same transport (see `callTool` below): the SDK's request machinery validates every message
 * with several schema parses, keeps a timer and an abort listener per request, and its stdio
 * transport writes each message with its own system call, which together cost as much as the rest
 * of a journaled call. Over stdio the transport is Brain's too (`StdioWire`): the SDK's spawn and
 * shutdown rules, with writes batched per tick and Brain's responses taken off the line before the
 * SDK's schema check.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { CallToolResultSchema, ErrorCode, JSONRPCMessageSchema, LATEST_PROTOCOL_VERSION, McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

import { MAX_TIMER_MS, WireError } from "./wire-types.ts";
import type { WireCall, WireCallee, WireConnection, WireResult, WireTarget, WireTool } from "./wire-types.ts";

/** The MCP revision Brain's client asks for in `initialize`. */
export const MCP_PROTOCOL_VERSION: string = LATEST_PROTOCOL_VERSION;

function wireError(e: unknown, what: string): WireError {
  if (e instanceof WireError) return e;
  if (e instanceof McpError) {
    if (e.code === ErrorCode.ConnectionClosed) return new WireError("closed", `${what}: the connection to the server closed`, e.code, undefined, { cause: e });
    if (e.code === ErrorCode.RequestTimeout) return new WireError("timeout", `${what}: no answer in time`, e.code, undefined, { cause: e });
    return new WireError("server", e.message.replace(/^MCP error -?\d+: /, ""), e.code, e.data, { cause: e });
  }
  // MCP's Streamable HTTP: a server answers 404 to a request carrying a session id it does not know
  // (it restarted, or ended the session) and has not processed the request; the client starts a new
  // session. Servers built on the MCP SDK's own example (server-everything among them) answer 400
  // "No valid session ID provided" instead: a request refused for its session, not processed either.
  if (e instanceof StreamableHTTPError && (e.code === 404 || (e.code === 400 && /session/i.test(e.message)))) {
    return new WireError("gone", `${what}: the server no longer knows this MCP session (HTTP ${e.code}); the request was not processed`, e.code, undefined, { cause: e });
  }
  // The SDK's schema check of the result (zod) failed: the server answered, but not a CallToolResult.
  if (e instanceof Error && Array.isArray((e as { issues?: unknown }).issues)) return new WireError("malformed", `${what}: the server's answer is not a valid MCP result`, undefined, undefined, { cause: e });
  return new WireError("transport", `${what}: ${e instanceof Error ? e.message : String(e)}`, undefined, undefined, { cause: e });
}

/** A request that was never sent has nothing to cancel. */
const NOT_SENT: WireCall = { cancel: () => undefined };

/** A message as it came off the wire, before any schema check. */
type Raw = Record<string, unknown>;

/**
 * One of Brain's `tools/call` requests in flight: its entry in `Calls` and the WireCall its caller
 * holds, in one object.
 */
class OpenCall implements WireCall {
  timer: ReturnType<typeof setTimeout> | undefined = undefined;

  constructor(
    private readonly calls: Calls,
    readonly id: string,
    readonly name: string,
    readonly callee: WireCallee,
  ) {}

  cancel(reason: string): void {
    this.calls.end(this.id, new WireError("cancelled", `tools/call ${this.name}: ${reason}`), true);
  }

  /** The wire's timer ran out. */
  timedOut(): void {
    this.calls.end(this.id, new WireError("timeout", `tools/call ${this.name}: no answer in time`, ErrorCode.RequestTimeout), true);
  }
}

/**
 * Brain's own `tools/call` requests: ids `brain-<n>` (strings, which the SDK's requests, numbered
 * from 0, never use), one entry per request in flight. The response is matched here, before the
 * SDK would see it, checked by `callResult` and handed to the call's callee; progress
 * notifications with the request's token go to it too, synchronously (the response that follows
 * on the same read must not overtake them).
 */
class Calls {
  private readonly open = new Map<string, OpenCall>();
  private next = 0;

  /**
   * `send` sends any message; `sendLine`, when the transport has it (stdio), queues a serialized
   * request line synchronously (throwing when not connected), so a call needs no promise of its own
   * for the write and no message object to serialize.
   */
  constructor(
    private readonly send: (m: JSONRPCMessage) => Promise<void>,
    private readonly sendLine?: (line: string) => void,
  ) {}

  call(name: string, args: unknown, callee: WireCallee): WireCall {
    const id = `brain-${++this.next}`;
    const entry = new OpenCall(this, id, name, callee);
    if (callee.timeoutMs < MAX_TIMER_MS) entry.timer = setTimeout(() => entry.timedOut(), callee.timeoutMs);
    // Whether the call is still open is whether it is in `open`: an ended call is no longer there.
    this.open.set(id, entry);
    const input = (args ?? {}) as Record<string, unknown>;
    if (this.sendLine !== undefined) {
      try {
        this.sendLine(callLine(id, name, input));
      } catch (e) {
        // Told after `callTool` has returned, as a failed send over HTTP is.
        queueMicrotask(() => this.end(id, wireError(e, `tools/call ${name}`), false));
      }
    } else {
      this.send({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: input, _meta: { progressToken: id } } }).catch((e: unknown) => this.end(id, wireError(e, `tools/call ${name}`), false));
    }
    return entry;
  }

  /** Ends open call `id` with `e` (failed), telling the server when `notify`; nothing when it is no longer open. */
  end(id: string, e: WireError, notify: boolean): void {
    const entry = this.open.get(id);
    if (entry === undefined) return;
    this.open.delete(id);
    if (entry.timer !== undefined) clearTimeout(entry.timer);
    if (notify) {
      this.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: e.message } }).catch(() => {
        // Handled: the request is over on Brain's side either way; a connection that is gone says so itself.
      });
    }
    entry.callee.failed(e);
  }

  /** Takes `m` when it is a response to, or progress of, one of Brain's calls (true); leaves anything else to the SDK. */
  take(m: Raw): boolean {
    const id = m.id;
    if (typeof id === "string") {
      if (!id.startsWith("brain-") || "method" in m) return false;
      const entry = this.open.get(id);
      // A late answer to a request Brain already ended (cancelled, timed out): nothing waits for it.
      if (entry === undefined) return true;
      this.open.delete(id);
      if (entry.timer !== undefined) clearTimeout(entry.timer);
      const error = m.error as { code?: unknown; message?: unknown; data?: unknown } | undefined;
      if (m.jsonrpc === "2.0" && "result" in m) {
        const r = callResult(m.result);
        if (r === undefined) entry.callee.failed(new WireError("malformed", `tools/call ${entry.name}: the server's answer is not a valid MCP result`));
        else entry.callee.answered(r);
      } else if (m.jsonrpc === "2.0" && typeof error === "object" && error !== null && typeof error.code === "number" && Number.isInteger(error.code) && typeof error.message === "string") {
        entry.callee.failed(responseError(error.code, error.message, error.data, `tools/call ${entry.name}`));
      } else entry.callee.failed(new WireError("malformed", `tools/call ${entry.name}: the server's answer is not a JSON-RPC response`));
      return true;
    }
    if (m.method === "notifications/progress" && !("id" in m)) {
      const p = m.params as { progressToken?: unknown; progress?: unknown; total?: unknown; message?: unknown } | undefined;
      if (typeof p?.progressToken !== "string" || !p.progressToken.startsWith("brain-")) return false;
      const entry = this.open.get(p.progressToken);
      if (entry !== undefined && typeof p.progress === "number") {
        entry.callee.progress({ progress: p.progress, ...(typeof p.total === "number" ? { total: p.total } : {}), ...(typeof p.message === "string" ? { message: p.message } : {}) });
      }
      return true;
    }
    return false;
  }

  /** The connection ended: every call still open has lost it (the server may have acted). */
  closed(): void {
    const open = [...this.open.values()];
    this.open.clear();
    for (const entry of open) {
      if (entry.timer !== undefined) clearTimeout(entry.timer);
      entry.callee.failed(new WireError("closed", `tools/call ${entry.name}: the connection to the server closed`, ErrorCode.ConnectionClosed));
    }
  }
}

/**
 * A `tools/call` request as its stdio line: the bytes `JSON.stringify` makes of the message object
 * `{jsonrpc, id, method, params: {name, arguments, _meta: {progressToken: id}}}` plus a newline,
 * without making that object. `id` is Brain's `brain-<n>`, which needs no escaping.
 */
export function callLine(id: string, name: string, args: Record<string, unknown>): string {
  return `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":${JSON.stringify(name)},"arguments":${JSON.stringify(args)},"_meta":{"progressToken":"${id}"}}}\n`;
}

/** A JSON-RPC error answered to a call, as the SDK's client would have reported it. */
function responseError(code: number, message: string, data: unknown, what: string): WireError {
  if (code === ErrorCode.ConnectionClosed) return new WireError("closed", `${what}: the connection to the server closed`, code);
  if (code === ErrorCode.RequestTimeout) return new WireError("timeout", `${what}: no answer in time`, code);
  return new WireError("server", message, code, data);
}

/** Whether every block of `content` is a text block of `type` and `text` only (a loop: no closure or key list per block). */
function onlyPlainText(content: unknown[]): boolean {
  for (let i = 0; i < content.length; i++) {
    const c = content[i] as { type?: unknown; text?: unknown } | null;
    if (typeof c !== "object" || c === null || c.type !== "text" || typeof c.text !== "string") return false;
    let keys = 0;
    for (const k in c) if (Object.hasOwn(c, k)) keys++;
    if (keys !== 2) return false;
  }
  return true;
}

/**
 * A `tools/call` result as a WireResult, or undefined when it is not a CallToolResult. The common
 * shape (text blocks of `type` and `text` only, an object `structuredContent`, a boolean
 * `isError`, no `_meta`) is checked here; anything else goes through the SDK's own schema, so
 * what is accepted, and what is taken from it, is what the SDK's client would accept and take.
 */
export function callResult(v: unknown): WireResult | undefined {
  if (typeof v === "object" && v !== null && !Array.isArray(v)) {
    const r = v as { content?: unknown; structuredContent?: unknown; isError?: unknown; _meta?: unknown };
    const content = r.content;
    const sc = r.structuredContent;
    if (
      Array.isArray(content) &&
      onlyPlainText(content) &&
      (sc === undefined || (typeof sc === "object" && sc !== null && !Array.isArray(sc))) &&
      (r.isError === undefined || typeof r.isError === "boolean") &&
      r._meta === undefined
    ) {
      return { content, structuredContent: sc as Record<string, unknown> | undefined, isError: r.isError === true };
    }
  }
  const parsed = CallToolResultSchema.safeParse(v);
  if (!parsed.success) return undefined;
  const r = parsed.data;
  return { content: (r.content ?? []) as unknown[], structuredContent: r.structuredContent as Record<string, unknown> | undefined, isError: r.isError === true };
}

/**
 * The stdio transport: the server as a child process, one JSON-RPC message a line each way. It
 * starts and stops the process as the SDK's StdioClientTransport does (the SDK's inherited
 * environment, stdin closed then SIGTERM then SIGKILL, 2 s apart), and differs in two ways: the
 * messages sent in one tick leave in one write (joined, written at `process.nextTick`, as the host
 * sockets batch a tick's frames in hosts/tick-cork.ts), and each line read is offered to `take`
 * before the SDK's schema check (Brain's own responses need none).
 */
class StdioWire implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Messages for Brain's own requests (see Calls.take); set once the client is connected. */
  take: ((m: Raw) => boolean) | undefined;
  private process: ChildProcess | undefined;
  private batch: string | undefined;
  private flushed: Promise<void> | undefined;
  private resolveFlushed: (() => void) | undefined;
  private tail = "";
  private readonly decoder = new StringDecoder("utf8");

  constructor(
    private readonly target: Extract<WireTarget, { kind: "stdio" }>,
    private readonly onStderr: (line: string) => void,
  ) {}

  start(): Promise<void> {
    if (this.process !== undefined) return Promise.reject(new Error("the stdio transport is already started"));
    return new Promise((resolve, reject) => {
      const child = spawn(this.target.command, this.target.args, {
        env: { ...getDefaultEnvironment(), ...this.target.env },
        stdio: ["pipe", "pipe", "pipe"],
        shell: false,
        windowsHide: process.platform === "win32",
        cwd: this.target.cwd,
      });
      this.process = child;
      child.on("error", (e) => {
        reject(e);
        this.onerror?.(e);
      });
      child.on("spawn", () => resolve());
      child.on("close", () => {
        if (this.process === child) this.process = undefined;
        this.onclose?.();
      });
      child.stdin!.on("error", (e) => this.onerror?.(e));
      child.stdout!.on("error", (e) => this.onerror?.(e));
      child.stdout!.on("data", (chunk: Buffer) => this.read(chunk));
      let buffered = "";
      child.stderr!.on("data", (chunk: Buffer) => {
        buffered += chunk.toString("utf8");
        const lines = buffered.split("\n");
        buffered = lines.pop() ?? "";
        for (const line of lines) if (line.trim() !== "") this.onStderr(line);
      });
    });
  }

  private read(chunk: Buffer): void {
    let text = this.tail + this.decoder.write(chunk);
    let from = 0;
    for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", from)) {
      const line = text.charCodeAt(nl - 1) === 13 ? text.slice(from, nl - 1) : text.slice(from, nl);
      from = nl + 1;
      this.message(line);
    }
    text = from === 0 ? text : text.slice(from);
    if (text.length > STDIO_DEFAULT_MAX_BUFFER_SIZE) {
      this.tail = "";
      this.onerror?.(new Error(`a line from the server is longer than ${STDIO_DEFAULT_MAX_BUFFER_SIZE} bytes`));
      void this.close();
      return;
    }
    this.tail = text;
  }

  private message(line: string): void {
    let m: unknown;
    try {
      m = JSON.parse(line);
    } catch (e) {
      this.onerror?.(e instanceof Error ? e : new Error(String(e)));
      return;
    }
    if (typeof m === "object" && m !== null && this.take?.(m as Raw) === true) return;
    const checked = JSONRPCMessageSchema.safeParse(m);
    if (!checked.success) {
      this.onerror?.(checked.error);
      return;
    }
    this.onmessage?.(checked.data);
  }

  send(message: JSONRPCMessage): Promise<void> {
    try {
      this.sendLine(`${JSON.stringify(message)}\n`);
    } catch (e) {
      return Promise.reject(e as Error);
    }
    // Settles once the batch holding it is written (or the pipe drained): made only for those who ask.
    return (this.flushed ??= new Promise<void>((resolve) => {
      this.resolveFlushed = resolve;
    }));
  }

  /** Queues one serialized message (a line) for this tick's write; throws when there is no process to write to. */
  sendLine(line: string): void {
    const stdin = this.process?.stdin;
    if (stdin === undefined || stdin === null) throw new Error("Not connected");
    if (this.batch !== undefined) {
      this.batch += line;
      return;
    }
    // The first message of a tick: the tick's others join it, and one write sends them all once
    // the tick's work is done (before any I/O is polled, so a lone message is not delayed).
    this.batch = line;
    process.nextTick(() => this.flush(stdin));
  }

  private flush(stdin: NonNullable<ChildProcess["stdin"]>): void {
    const text = this.batch!;
    const resolve = this.resolveFlushed;
    this.batch = undefined;
    this.flushed = undefined;
    this.resolveFlushed = undefined;
    // A process gone meanwhile: its close ends the calls (`closed`), nothing to write to.
    if (!stdin.writable || stdin.write(text)) resolve?.();
    else if (resolve !== undefined) stdin.once("drain", resolve);
  }

  async close(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    this.tail = "";
    if (child === undefined) return;
    const closed = new Promise<void>((r) => child.once("close", () => r()));
    const wait = () => Promise.race([closed, new Promise<void>((r) => setTimeout(r, 2000).unref())]);
    try {
      child.stdin?.end();
    } catch {
      // ignore: the process may already be gone
    }
    await wait();
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill("SIGTERM");
      } catch {
        // ignore
      }
      await wait();
    }
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill("SIGKILL");
      } catch {
        // ignore
      }
    }
  }
}

/**
 * Connects and initializes within `timeoutMs`. Rejects with a WireError; a process that was
 * started is stopped again. `onStderr` gets the server's stderr lines (stdio).
 */
export async function connect(target: WireTarget, o: { timeoutMs: number; clientName: string; clientVersion: string; onStderr: (line: string) => void }): Promise<WireConnection> {
  const client = new Client({ name: o.clientName, version: o.clientVersion }, { capabilities: {} });
  let transport: Transport;
  let stdio: StdioWire | undefined;
  let watch: StreamWatch | undefined;
  if (target.kind === "stdio") {
    stdio = new StdioWire(target, o.onStderr);
    transport = stdio;
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
  const calls = new Calls((m) => transport.send(m), stdio === undefined ? undefined : (line) => stdio.sendLine(line));
  const fireClosed = (why: string) => {
    if (closed) return;
    closed = true;
    calls.closed();
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
  if (stdio !== undefined) stdio.take = (m) => calls.take(m);
  else {
    // Streamable HTTP: the SDK's transport has checked each message already; Brain's own are taken
    // before the client sees them, after the stream watch has (it must see every response).
    const onmessage = transport.onmessage;
    transport.onmessage = (m: JSONRPCMessage, extra?: unknown) => {
      if (calls.take(m as unknown as Raw)) return;
      (onmessage as ((m: JSONRPCMessage, extra?: unknown) => void) | undefined)?.(m, extra);
    };
    watch?.observe();
  }
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
    callTool(name, args, c) {
      // Brain checks structuredContent against the placed contract itself: the SDK's client would
      // refuse a result the server did send.
      if (closed) {
        queueMicrotask(() => c.failed(new WireError("transport", `tools/call ${name}: Not connected`)));
        return NOT_SENT;
      }
      return calls.call(name, args, c);
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
