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
import { requestErrorEnd, resultEnd } from "./outcome.ts";
import type { McpEnd } from "./outcome.ts";
import { McpServer } from "./server.ts";
import { MAX_TIMER_MS, WireError } from "./wire-types.ts";
import type { WireCall, WireConnection, WireTool } from "./wire-types.ts";

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
  private closing = false;
  // The contract (and digest: JCS + SHA-256 of the schemas) of a listed tool under a Brain name,
  // computed once per listing rather than at every call.
  private readonly contracts = new WeakMap<WireTool, Map<string, ReturnType<typeof contractOf>>>();

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
    this.listed(call.tool, ready.tools);
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
   * Sends the call's `tools/call` on `conn` and ends the call from its answer. It is sent once: the
   * one exception is a Streamable HTTP server that answers 404 for the MCP session (it restarted),
   * which by MCP's rules has not processed the request; the call then goes, once, on a new session.
   */
  private send(call: CallInvocation, sink: CallSink, server: McpServer, conn: WireConnection): CallHandle {
    const p = call.tool.placement as McpPlacement;
    const where = `MCP tool ${p.tool} on server ${p.server}`;
    const contract: ToolContract = call.tool.contract;
    let stopped = false;
    let sent: WireCall | undefined;
    const handle: CallHandle = {
      stop: () => {
        stopped = true;
        sent?.cancel("the call ended in Brain (deadline or cancellation)");
      },
    };
    let events: Promise<unknown> | undefined;
    const finishNow = (end: McpEnd | undefined): Promise<unknown> | undefined => {
      if (end === undefined || stopped || sink.finished) return undefined;
      return sink.finish(end.outcome, end.content).catch(() => {
        // Handled: a refused finish is a call already finished (its first outcome stands); a failed
        // commit is logged by the call itself.
      });
    };
    // After the call's progress events, if any (not an async function: a call without progress,
    // the common case, needs no promise of its own for it).
    const finish = (end: McpEnd | undefined): Promise<unknown> | undefined => (events === undefined ? finishNow(end) : events.then(() => finishNow(end)));
    const over = () => stopped || this.closing || sink.finished;
    const dispatch = (on: WireConnection, again: boolean): void => {
      // The call may have ended (deadline, cancellation) while the server was being started: nothing is sent then.
      if (sink.finished || (call.deadlineAt !== null && call.deadlineAt <= Date.now())) return;
      // No deadline: no timer either (Brain's cancellation ends the request). With one, the wire's own
      // timer is a backstop a minute after it, should the dispatcher's timeout not reach this call.
      const timeoutMs = call.deadlineAt === null ? MAX_TIMER_MS : Math.min(MAX_TIMER_MS - 1, Math.max(1, call.deadlineAt - Date.now() + 60_000));
      sent = on.callTool(p.tool, call.input ?? {}, {
        timeoutMs,
        onProgress: (progress) => {
          events = (events ?? Promise.resolve()).then(() => sink.emit("progress", progress)).catch(() => {
            // Handled: a refused emit is a call already over or over its emission budget (the call says which).
          });
        },
      });
      void sent.result
        .then(
          (r) => finish(resultEnd(r, contract, where)),
          async (e: unknown) => {
            // The dispatcher ended it (timeout/cancelled), or the runtime is closing (recovery ends it `unknown`).
            if (stopped || this.closing) return;
            if (e instanceof WireError && (e.reason === "transport" || e.reason === "gone")) server.broken(on);
            if (e instanceof WireError && e.reason === "gone" && !again) {
              let next: WireConnection;
              try {
                next = await server.connection();
              } catch (c) {
                // Not processed, and the server cannot be reached again: the call did not run.
                return finish({ outcome: failure("unavailable", `${where}: the server forgot its MCP session (HTTP 404) and could not be connected again: ${toErrorInfo(c).message}`, undefined, true) });
              }
              if (!over()) dispatch(next, true);
              return;
            }
            const end = requestErrorEnd(e, where);
            if (end === undefined) sink.lost(`${where}: ${e instanceof Error ? e.message : String(e)}; the server may have acted on it (never re-sent)`);
            return finish(end);
          },
        )
        .catch((e: unknown) => {
          if (!over()) sink.lost(`${where}: ${toErrorInfo(e).message}`);
        });
    };
    dispatch(conn, false);
    return handle;
  }

  async close(): Promise<void> {
    // Server shutdown: in-flight calls are left open (recovery ends them `unknown`), their servers stopped.
    this.closing = true;
    for (const s of this.servers.values()) await s.close();
  }
}

