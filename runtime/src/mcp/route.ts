import type { IncomingMessage, ServerResponse } from "node:http";
import type { PlacedTool } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";
import type { KeyRing } from "../credentials/keys.ts";
import { ownerOf } from "../credentials/keys.ts";
import type { TenantGate } from "../limits/tenant-gate.ts";
import type { SessionManager } from "../sessions/manager.ts";
import { readBody } from "../http/body.ts";
import { checkJsonTextDepth } from "../json-limits.ts";
import { retryAfterMs } from "../limits/key-limits.ts";
import type { Route } from "../http/routes.ts";
import { messageOf } from "../logger.ts";
import type { Logger } from "../logger.ts";
import type { Redactor } from "../redact.ts";
import type { McpSession } from "./session.ts";
import { loadMcp } from "./optional.ts";
import type { OriginGuard } from "./origin-guard.ts";

// JSON-RPC error codes the route answers before the MCP SDK is involved (it may not be installed).
const ErrorCode = { ParseError: -32700, InvalidRequest: -32600, InternalError: -32603 } as const;

/**
 * The MCP server side, loaded at the first request to MCP_PATH: the SDK is an optional dependency
 * (a runtime whose clients never use /v1/mcp does not load it, nor need it installed).
 */
const server = (() => {
  let loaded: Promise<{ isInitializeRequest: (typeof import("./sdk.ts"))["isInitializeRequest"]; McpSession: typeof McpSession }> | undefined;
  return () => {
    if (loaded === undefined) {
      const load = loadMcp(async () => ({ isInitializeRequest: (await import("./sdk.ts")).isInitializeRequest, McpSession: (await import("./session.ts")).McpSession }), "the MCP endpoint (/v1/mcp)");
      loaded = load;
      // Not kept when it failed: the next request tries again (and says why again).
      load.catch(() => loaded === load && (loaded = undefined));
    }
    return loaded;
  };
})();

/** Where the runtime serves MCP (Streamable HTTP): docs/mcp.md. */
export const MCP_PATH = "/v1/mcp";

export interface McpRouteDeps {
  keys: KeyRing;
  tenants: TenantGate;
  sessions: SessionManager;
  /** The tools an MCP session of `owner` (an API key id; undefined: the operator token) serves: its hosts' tools connected now. */
  hostTools(owner: string | undefined): PlacedTool[];
  guard: OriginGuard;
  logger: Logger;
  redactor?: Redactor;
  /** A call's deadline when its tools/call names none; undefined: unlimited (the client's own timeout cancels it). */
  deadlineMs?: number;
  /** An MCP session without requests or open calls for this long ends as if its client deleted it; default DEFAULT_MCP_IDLE_MS. */
  idleMs?: number;
}

/** Default of McpRouteDeps.idleMs: one hour. */
export const DEFAULT_MCP_IDLE_MS = 3_600_000;

/**
 * The MCP endpoint: Host/Origin checked first (DNS-rebinding protection), then the bearer token as on
 * every route (an API key or the operator token), then the MCP session the `Mcp-Session-Id` names,
 * which only the credential that opened it reaches (to another it does not exist: 404). An
 * `initialize` without a session id opens a new MCP session, and with it a Brain session placing the
 * credential's connected host tools. Every refusal is a JSON-RPC error body with its HTTP status.
 */
export function mcpRoute(deps: McpRouteDeps): { route: Route; close(): Promise<void> } {
  const open = new Map<string, McpSession>();

  const closed = async (s: McpSession): Promise<void> => {
    if (open.get(s.id) !== s) return;
    open.delete(s.id);
    // The client ended the MCP session: its Brain session goes too (open calls end `cancelled`); its records stay.
    await deps.sessions.delete(s.id).then(
      () => undefined,
      (e: unknown) => deps.logger.warn("deleting the Brain session of an ended MCP session failed", { sessionId: s.id, error: messageOf(e) }),
    );
  };

  // Clients that go away without DELETE leave their MCP sessions here: idle ones end, so memory and
  // the key's open sessions stay bounded. A session with a call open is never idle.
  const idleMs = deps.idleMs ?? DEFAULT_MCP_IDLE_MS;
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const s of open.values()) {
      if (s.openCalls > 0 || now - s.lastActive < idleMs) continue;
      deps.logger.debug("an idle MCP session ended", { sessionId: s.id, idleMs });
      void closed(s);
      s.close().catch((e: unknown) => deps.logger.warn("closing an idle MCP session failed", { sessionId: s.id, error: messageOf(e) }));
    }
  }, Math.max(10, Math.min(idleMs / 2, 60_000)));
  sweep.unref();

  const start = async (owner: string | undefined): Promise<McpSession> => {
    const tools = deps.hostTools(owner);
    const created = await deps.tenants.session(owner, () => deps.sessions.create({ model: { provider: "scripted", script: [] }, tools }, owner));
    const { McpSession } = await server();
    const session = new McpSession(created.id, owner, tools, { sessions: deps.sessions, logger: deps.logger, deadlineMs: deps.deadlineMs, closed });
    await session.connect();
    open.set(created.id, session);
    return session;
  };

  const route: Route = async (req, res, url) => {
    if ((url.pathname.replace(/\/+$/, "") || "/") !== MCP_PATH) return false;
    try {
      await serve(req, res);
    } catch (e) {
      refuse(res, e, deps.redactor);
    }
    return true;
  };

  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const refused = deps.guard.refuse(req);
    if (refused !== undefined) throw new BrainRuntimeError("forbidden", refused);
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1]?.trim();
    const principal = bearer === undefined ? undefined : deps.keys.authenticate(bearer);
    if (principal === undefined) throw new BrainRuntimeError("unauthorized", "missing or wrong bearer token (the operator token or a live API key)");
    const owner = ownerOf(principal);
    deps.tenants.request(owner);
    const method = req.method ?? "GET";
    const header = req.headers["mcp-session-id"];
    const sessionId = Array.isArray(header) ? header[0] : header;
    if (method === "POST") {
      const body = parseBody(await readBody(req));
      if (sessionId === undefined) {
        if (!(await server()).isInitializeRequest(body)) throw new JsonRpcRefusal(400, ErrorCode.InvalidRequest, "no Mcp-Session-Id header: open a session with an initialize request first");
        const session = await start(owner);
        await session.transport.handleRequest(req, res, body);
        // An initialize the transport refused opened no MCP session: its Brain session goes at once.
        if (session.transport.sessionId === undefined) await closed(session);
        return;
      }
      return void (await mine(sessionId, owner).transport.handleRequest(req, res, body));
    }
    if (method === "GET" || method === "DELETE") {
      if (sessionId === undefined) throw new JsonRpcRefusal(400, ErrorCode.InvalidRequest, "no Mcp-Session-Id header");
      return void (await mine(sessionId, owner).transport.handleRequest(req, res));
    }
    throw new JsonRpcRefusal(405, ErrorCode.InvalidRequest, `${method} is not an MCP Streamable HTTP method (POST, GET, DELETE)`, { allow: "GET, POST, DELETE" });
  };

  /** The open MCP session of that id opened by `owner`; to anyone else it does not exist. */
  const mine = (id: string, owner: string | undefined): McpSession => {
    const s = open.get(id);
    if (s === undefined || s.owner !== owner) throw new JsonRpcRefusal(404, -32001, `no MCP session ${id} (it ended, was idle too long, the runtime restarted, or another credential opened it): initialize a new one`);
    s.lastActive = Date.now();
    return s;
  };

  const close = async () => {
    clearInterval(sweep);
    const all = [...open.values()];
    open.clear();
    await Promise.all(all.map((s) => s.close().catch((e: unknown) => deps.logger.warn("closing an MCP session failed", { sessionId: s.id, error: messageOf(e) }))));
  };

  return { route, close };
}

/** A refusal answered as a JSON-RPC error with its own HTTP status. */
class JsonRpcRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** HTTP status and JSON-RPC code of the Brain errors the route can meet before the MCP transport answers. */
function refuse(res: ServerResponse, e: unknown, redactor: Redactor | undefined): void {
  let status = 500;
  let code: number = ErrorCode.InternalError;
  let headers: Record<string, string> = {};
  let data: unknown;
  if (e instanceof JsonRpcRefusal) ({ status, code, headers } = e);
  else if (e instanceof BrainRuntimeError) {
    status = e.status;
    code = status === 400 || status === 413 ? ErrorCode.InvalidRequest : -32001;
    data = e.toInfo();
    if (e.code === "unauthorized") headers = { "www-authenticate": "Bearer" };
    if (e.code === "limit_exceeded") headers = { "retry-after": String(Math.max(1, Math.ceil(retryAfterMs(e) / 1000))) };
  }
  const message = e instanceof Error ? e.message : String(e);
  const error = { code, message, ...(data === undefined ? {} : { data }) };
  const body = JSON.stringify({ jsonrpc: "2.0", id: null, error: redactor === undefined ? error : redactor.redact(error) });
  if (res.headersSent || res.writableEnded) return void res.end();
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/** A POST body as JSON: not JSON (or nested beyond the limit) is a JSON-RPC parse error. */
function parseBody(text: string): unknown {
  const tooDeep = checkJsonTextDepth(text, "MCP request body");
  if (tooDeep !== undefined) throw new JsonRpcRefusal(400, ErrorCode.ParseError, tooDeep);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new JsonRpcRefusal(400, ErrorCode.ParseError, `Parse error: the body is not JSON (${messageOf(e)})`);
  }
}
