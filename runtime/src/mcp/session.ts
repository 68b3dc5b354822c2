import type { JournalRecord, Outcome, PlacedTool } from "@aexhq/brain-protocol";
import type { SessionManager } from "../sessions/manager.ts";
import type { ToolCall } from "../dispatch/call.ts";
import { BrainRuntimeError } from "../errors.ts";
import { messageOf } from "../logger.ts";
import type { Logger } from "../logger.ts";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, Server, SetLevelRequestSchema, StreamableHTTPServerTransport } from "./sdk.ts";
import type { CallToolResult, LoggingLevel, ServerNotification } from "./sdk.ts";
import { META_PREFIX, callToolResult, mcpTool } from "./tool-result.ts";
import { VERSION } from "../http/routes.ts";

export interface McpSessionDeps {
  sessions: SessionManager;
  logger: Logger;
  /** A call's deadline when its request names none (`_meta["aexhq.brain/deadlineMs"]`); undefined: unlimited. */
  deadlineMs: number | undefined;
  /** The client ended the MCP session (HTTP DELETE): its Brain session goes. */
  closed(session: McpSession): Promise<void>;
}

const LEVELS: readonly LoggingLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/**
 * One MCP session: an MCP server over its own Streamable HTTP transport, bound to one Brain session
 * whose id is the MCP session id (Mcp-Session-Id). Every tools/call is a journaled call of that
 * session (SessionManager.startCall): its tool.event records reach the client as notifications, its
 * Outcome as the CallToolResult (tool-result.ts), and the client's notifications/cancelled cancels it.
 */
export class McpSession {
  readonly server: Server;
  readonly transport: StreamableHTTPServerTransport;
  private tools: Map<string, PlacedTool>;
  private open = new Set<ToolCall>();
  /** The least severe level the client wants log messages of (logging/setLevel); none set: every level. */
  private level: LoggingLevel | undefined;

  constructor(
    /** The Brain session's id, which is the MCP session's id too. */
    readonly id: string,
    /** The API key that opened it (undefined: the operator token): only that credential reaches it. */
    readonly owner: string | undefined,
    tools: PlacedTool[],
    private deps: McpSessionDeps,
  ) {
    this.tools = new Map(tools.map((t) => [t.contract.name, t]));
    this.server = new Server({ name: "brain", version: VERSION }, { capabilities: { tools: {}, logging: {} } });
    this.transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => id, onsessionclosed: () => deps.closed(this) });
    this.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...this.tools.values()].map((t) => mcpTool(t.contract)) }));
    this.server.setRequestHandler(SetLevelRequestSchema, (request) => {
      this.level = request.params.level;
      return {};
    });
    this.server.setRequestHandler(CallToolRequestSchema, (request, extra) => this.call(request.params, extra));
  }

  async connect(): Promise<void> {
    await this.server.connect(this.transport);
  }

  private async call(
    params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> & { progressToken?: string | number } },
    extra: { signal: AbortSignal; requestId: string | number; sendNotification(n: ServerNotification): Promise<void> },
  ): Promise<CallToolResult> {
    const placed = this.tools.get(params.name);
    if (placed === undefined) throw new McpError(ErrorCode.InvalidParams, `Tool ${params.name} not found: this MCP session serves ${[...this.tools.keys()].join(", ") || "no tools"}`);
    const deadlineAt = this.deadlineOf(params._meta);
    const progressToken = params._meta?.progressToken;
    // Notifications go out in journal order, and all of them before the result.
    let sent: Promise<void> = Promise.resolve();
    const notify = (n: ServerNotification) => {
      sent = sent.then(() => extra.sendNotification(n)).catch((e: unknown) => this.deps.logger.debug("an MCP notification was not delivered (the client's stream is gone)", { sessionId: this.id, error: messageOf(e) }));
    };
    let progress: number | undefined;
    let last: { status: Outcome["status"]; content: string | undefined } | undefined;
    const listen = (r: JournalRecord) => {
      if (r.type === "tool.result") last = { status: r.data.outcome.status, content: r.data.content };
      if (r.type !== "tool.event") return;
      const data = r.data.data as Record<string, unknown> | null;
      const fields = typeof data === "object" && data !== null && !Array.isArray(data) ? data : {};
      const level = LEVELS.includes(fields.level as LoggingLevel) ? (fields.level as LoggingLevel) : "info";
      if (this.level === undefined || LEVELS.indexOf(level) >= LEVELS.indexOf(this.level)) notify({ method: "notifications/message", params: { level, logger: r.data.kind, data: r.data.data } });
      if (progressToken === undefined) return;
      // MCP progress must increase: the event's own `progress` when it does, else one more.
      const own = typeof fields.progress === "number" && Number.isFinite(fields.progress) ? fields.progress : undefined;
      progress = own !== undefined && (progress === undefined || own > progress) ? own : (progress ?? 0) + 1;
      const message = typeof fields.message === "string" ? fields.message : r.data.kind;
      const total = typeof fields.total === "number" && Number.isFinite(fields.total) ? { total: fields.total } : {};
      notify({ method: "notifications/progress", params: { progressToken, progress, ...total, message } });
    };
    let call: ToolCall;
    try {
      call = await this.deps.sessions.startCall(this.id, placed.contract.name, params.arguments ?? {}, deadlineAt, `MCP tools/call ${placed.contract.name} (request ${String(extra.requestId)})`, listen);
    } catch (e) {
      throw asMcpError(e);
    }
    this.open.add(call);
    const cancel = () => void this.deps.sessions.cancelCall(call).catch((e: unknown) => this.deps.logger.warn("cancelling an MCP call failed", { callId: call.callId, error: messageOf(e) }));
    extra.signal.addEventListener("abort", cancel, { once: true });
    if (extra.signal.aborted) cancel();
    try {
      const outcome = await call.outcome();
      await sent;
      return callToolResult(call.callId, outcome, last?.status === outcome.status ? last.content : undefined, placed.contract);
    } finally {
      extra.signal.removeEventListener("abort", cancel);
      this.open.delete(call);
      this.lastActive = Date.now();
    }
  }

  /** The call's absolute deadline: `_meta["aexhq.brain/deadlineMs"]` (0: none), else the runtime's default. */
  private deadlineOf(meta: Record<string, unknown> | undefined): number | null {
    const raw = meta?.[`${META_PREFIX}deadlineMs`];
    if (raw === undefined) return this.deps.deadlineMs === undefined || this.deps.deadlineMs === 0 ? null : Date.now() + this.deps.deadlineMs;
    if (typeof raw !== "number" || !Number.isSafeInteger(raw) || raw < 0) throw new McpError(ErrorCode.InvalidParams, `_meta["${META_PREFIX}deadlineMs"] must be a non-negative integer (ms; 0: no deadline), got ${JSON.stringify(raw)}`);
    return raw === 0 ? null : Date.now() + raw;
  }

  /** When the client last sent a request (route.ts ends MCP sessions idle for longer than `mcp.idleMs`). */
  lastActive = Date.now();

  /** Calls still open (the MCP session is ending: they are cancelled with its Brain session). */
  get openCalls(): number {
    return this.open.size;
  }

  async close(): Promise<void> {
    await this.transport.close();
  }
}

/** A Brain error starting a call, as the JSON-RPC error the client gets (its code in `data`): never `internal`. */
function asMcpError(e: unknown): McpError {
  if (e instanceof BrainRuntimeError) return new McpError(e.code === "not_found" ? ErrorCode.InvalidParams : ErrorCode.InvalidRequest, e.message, { code: e.code, ...(e.details === undefined ? {} : { details: e.details }) });
  return new McpError(ErrorCode.InternalError, messageOf(e));
}
