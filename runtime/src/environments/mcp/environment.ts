import type { ErrorInfo, PlacedTool, ToolContract } from "@aexhq/brain-protocol";
import type { CallHandle, CallInvocation, CallSink, Environment } from "../../dispatch/environment.ts";
import { BrainRuntimeError, toErrorInfo } from "../../errors.ts";
import type { Logger } from "../../logger.ts";
import { failure } from "../json-answer.ts";
import { validateSchema } from "../json-schema.ts";
import type { SchemaIssue } from "../json-schema.ts";
import { parseMcpServers } from "./config.ts";
import type { McpServerConfig } from "./config.ts";
import { contractOf } from "./contract.ts";
import { requestErrorEnd, resultEnd, whereOf } from "./outcome.ts";
import type { McpEnd } from "./outcome.ts";
import { McpServer } from "./server.ts";
import { MAX_TIMER_MS, WireError } from "./wire-types.ts";
import type { WireCall, WireCallee, WireConnection, WireProgress, WireResult, WireTool } from "./wire-types.ts";

/** Input its schema refuses: an error outcome (tool.result, then tool.finished), as every Environment answers it; nothing is sent. */
async function refuseInput(sink: CallSink, issues: SchemaIssue[]): Promise<CallHandle> {
  await sink.finish(failure("invalid_input", "input does not match the tool's input schema", issues));
  return { stop: () => undefined };
}
type McpPlacement = Extract<PlacedTool["placement"], { kind: "mcp" }>;

/**
 * MCP servers as an Environment (docs/mcp.md). The operator defines servers by name; a session
 * places a server's tool with its advertised schemas as the contract. Admission and every call
 * check that the server still advertises those schemas. Each call is one `tools/call`, sent once
 * after the dispatcher committed tool.call_started and never re-sent; progress notifications are
 * journaled as `progress` events; the dispatcher's deadline or a cancellation aborts the request
 * (MCP `notifications/cancelled`); a connection or process lost with the call open is `unknown`.
 */
export class McpEnvironment implements Environment {
  readonly kind = "mcp" as const;
  private readonly servers = new Map<string, McpServer>();
  private closed = false;

  /** The server is closing: calls in flight are left to recovery then (McpCall reads it). */
  get closing(): boolean {
    return this.closed;
  }
  // The contract (and digest: JCS + SHA-256 of the schemas) of a listed tool under a Brain name,
  // computed once per listing rather than at every call.
  private readonly contracts = new WeakMap<WireTool, Map<string, ReturnType<typeof contractOf>>>();
  /** The server's listing each placement last passed `listed` against (a new listing is a new array). */
  private readonly checked = new WeakMap<PlacedTool, readonly WireTool[]>();

  constructor(definitions: Readonly<Record<string, McpServerConfig>>, logger: Logger, version: string) {
    for (const [name, config] of Object.entries(parseMcpServers(definitions, "mcpServers"))) this.servers.set(name, new McpServer(name, config, logger, version));
  }

  /** The operator's server `name`, or undefined. */
  server(name: string): McpServer | undefined {
    return this.servers.get(name);
  }

  async admit(tool: PlacedTool): Promise<ErrorInfo | undefined> {
    try {
      await this.resolve(tool);
      return undefined;
    } catch (e) {
      return toErrorInfo(e);
    }
  }

  /** The operator's server of this placement. Throws a typed BrainRuntimeError. */
  private serverOf(tool: PlacedTool): McpServer {
    const p = tool.placement as McpPlacement;
    const server = this.servers.get(p.server);
    if (server === undefined) {
      // Only the requested name: the operator's other servers are not the application's business.
      throw new BrainRuntimeError("unsupported", `this runtime has no MCP server ${JSON.stringify(p.server)} (tool ${tool.contract.name}): the operator defines MCP servers (BRAIN_MCP_SERVERS)`, { tool: tool.contract.name, server: p.server });
    }
    return server;
  }

  /** The server's listed tool for this placement, checked against the placed contract. Throws a typed BrainRuntimeError. */
  private async resolve(tool: PlacedTool): Promise<{ server: McpServer; listed: WireTool }> {
    const server = this.serverOf(tool);
    return { server, listed: this.listed(tool, await server.tools()) };
  }

  /** The placement's tool among the server's `tools`, checked against the placed contract. Throws a typed BrainRuntimeError. */
  private listed(tool: PlacedTool, tools: readonly WireTool[]): WireTool {
    const p = tool.placement as McpPlacement;
    const name = tool.contract.name;
    const listed = tools.find((t) => t.name === p.tool);
    if (listed === undefined) throw new BrainRuntimeError("not_found", `MCP server ${p.server} lists no tool ${JSON.stringify(p.tool)} (tool ${name})`, { tool: name, server: p.server, mcpTool: p.tool });
    const advertised = this.advertised(listed, name);
    if ("reason" in advertised) throw new BrainRuntimeError("unsupported", `MCP server ${p.server}'s tool ${p.tool} cannot be placed: ${advertised.reason}`, { tool: name, server: p.server, mcpTool: p.tool });
    if (advertised.digest !== tool.contract.digest) {
      throw new BrainRuntimeError(
        "digest_mismatch",
        `tool ${name}: MCP server ${p.server} now advertises other schemas for ${p.tool} (digest ${advertised.digest}, placed ${tool.contract.digest}); place it again from GET /v1/mcp-servers/${p.server}/tools`,
        { tool: name, server: p.server, mcpTool: p.tool, digest: tool.contract.digest, expected: advertised.digest },
      );
    }
    return listed;
  }

  private advertised(listed: WireTool, name: string): ReturnType<typeof contractOf> {
    let byName = this.contracts.get(listed);
    if (byName === undefined) this.contracts.set(listed, (byName = new Map()));
    let c = byName.get(name);
    if (c === undefined) byName.set(name, (c = contractOf(listed, name)));
    return c;
  }

  start(call: CallInvocation, sink: CallSink): CallHandle | Promise<CallHandle> {
    // Checked again: the operator may have changed the server, or the server its tools, since
    // admission. With the server connected and its list at hand, without waiting for anything.
    const server = this.serverOf(call.tool);
    const ready = server.ready();
    if (ready === undefined) return this.startConnecting(call, sink, server);
    // Checked once per listing: the same placement against the same list passes again.
    if (this.checked.get(call.tool) !== ready.tools) {
      this.listed(call.tool, ready.tools);
      this.checked.set(call.tool, ready.tools);
    }
    const issues = validateSchema(call.tool.contract.inputSchema, call.input);
    if (issues.length > 0) return refuseInput(sink, issues);
    return this.send(call, sink, server, ready.conn);
  }

  private async startConnecting(call: CallInvocation, sink: CallSink, server: McpServer): Promise<CallHandle> {
    this.listed(call.tool, await server.tools());
    const issues = validateSchema(call.tool.contract.inputSchema, call.input);
    if (issues.length > 0) return refuseInput(sink, issues);
    return this.send(call, sink, server, await server.connection());
  }

  /**
   * Sends the call's `tools/call` on `conn` and ends the call from its answer (McpCall). It is sent
   * once: the one exception is a Streamable HTTP server that answers 404 for the MCP session (it
   * restarted), which by MCP's rules has not processed the request; the call then goes, once, on a
   * new session.
   */
  private send(call: CallInvocation, sink: CallSink, server: McpServer, conn: WireConnection): CallHandle {
    const c = new McpCall(this, call, sink, server);
    c.dispatch(conn, false);
    return c;
  }

  async close(): Promise<void> {
    // Server shutdown: in-flight calls are left open (recovery ends them `unknown`), their servers stopped.
    this.closed = true;
    for (const s of this.servers.values()) await s.close();
  }
}

const STOPPED = "the call ended in Brain (deadline or cancellation)";

/**
 * One call on an MCP server: the dispatcher's handle on it and the wire's callee, in one object
 * (no closures, promises or reactions of its own on the common path: an answer read off the wire
 * goes straight to the call's finish).
 */
class McpCall implements CallHandle, WireCallee {
  timeoutMs = MAX_TIMER_MS;
  private stopped = false;
  private sent: WireCall | undefined;
  /** The journaling of the call's progress events, when it had any: its finish comes after them. */
  private events: Promise<unknown> | undefined;
  /** The connection the request went on, and whether it is the call's second try (see `send`). */
  private on: WireConnection | undefined;
  private again = false;

  constructor(
    private readonly env: { readonly closing: boolean },
    private readonly call: CallInvocation,
    private readonly sink: CallSink,
    private readonly server: McpServer,
  ) {}

  private get placement(): McpPlacement {
    return this.call.tool.placement as McpPlacement;
  }

  /** How errors name the tool (made only for an error). */
  private get where(): string {
    return whereOf(this.placement);
  }

  stop(): void {
    this.stopped = true;
    this.sent?.cancel(STOPPED);
  }

  private over(): boolean {
    return this.stopped || this.env.closing || this.sink.finished;
  }

  dispatch(on: WireConnection, again: boolean): void {
    const { deadlineAt } = this.call;
    // The call may have ended (deadline, cancellation) while the server was being started: nothing is sent then.
    if (this.sink.finished || (deadlineAt !== null && deadlineAt <= Date.now())) return;
    this.on = on;
    this.again = again;
    // No deadline: no timer either (Brain's cancellation ends the request). With one, the wire's own
    // timer is a backstop a minute after it, should the dispatcher's timeout not reach this call.
    this.timeoutMs = deadlineAt === null ? MAX_TIMER_MS : Math.min(MAX_TIMER_MS - 1, Math.max(1, deadlineAt - Date.now() + 60_000));
    this.sent = on.callTool(this.placement.tool, this.call.input ?? {}, this);
  }

  progress(progress: WireProgress): void {
    this.events = (this.events ?? Promise.resolve()).then(() => this.sink.emit("progress", progress)).catch(() => {
      // Handled: a refused emit is a call already over or over its emission budget (the call says which).
    });
  }

  answered(r: WireResult): void {
    let end: McpEnd;
    try {
      end = resultEnd(r, this.call.tool.contract, this.placement);
    } catch (e) {
      this.lose(e);
      return;
    }
    this.finish(end);
  }

  failed(e: WireError): void {
    // The dispatcher ended it (timeout/cancelled), or the runtime is closing (recovery ends it `unknown`).
    if (this.stopped || this.env.closing) return;
    this.fail(e).catch((x: unknown) => this.lose(x));
  }

  private async fail(e: WireError): Promise<void> {
    const on = this.on!;
    if (e.reason === "transport" || e.reason === "gone") this.server.broken(on);
    if (e.reason === "gone" && !this.again) {
      let next: WireConnection;
      try {
        next = await this.server.connection();
      } catch (c) {
        // Not processed, and the server cannot be reached again: the call did not run.
        this.finish({ outcome: failure("unavailable", `${this.where}: the server forgot its MCP session (HTTP 404) and could not be connected again: ${toErrorInfo(c).message}`, undefined, true) });
        return;
      }
      if (!this.over()) this.dispatch(next, true);
      return;
    }
    const end = requestErrorEnd(e, this.where);
    if (end === undefined) this.sink.lost(`${this.where}: ${e.message}; the server may have acted on it (never re-sent)`);
    else this.finish(end);
  }

  private lose(e: unknown): void {
    if (!this.over()) this.sink.lost(`${this.where}: ${toErrorInfo(e).message}`);
  }

  /** Finishes the call with `end`, after its progress events if it had any. */
  private finish(end: McpEnd): void {
    if (this.events === undefined) this.finishNow(end);
    else this.events.then(() => this.finishNow(end)).catch((e: unknown) => this.lose(e));
  }

  private finishNow(end: McpEnd): void {
    if (this.stopped || this.sink.finished) return;
    this.sink.finish(end.outcome, end.content).catch(() => {
      // Handled: a refused finish is a call already finished (its first outcome stands); a failed
      // commit is logged by the call itself.
    });
  }
}
