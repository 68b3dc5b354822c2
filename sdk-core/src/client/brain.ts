import type { ModelConfig, PlacedTool, Session as SessionView, SessionList, Placement } from "@aexhq/brain-protocol";
import type { Platform } from "../platform.ts";
import type { PlacedToolSpec } from "../tool.ts";
import { HostConnection } from "../host/connection.ts";
import { HttpClient } from "./http.ts";
import { Session } from "./session.ts";
import { ProtocolError, SdkError } from "../errors.ts";
import { isComponent } from "../component.ts";
import { ensureAdmitted, forgetAdmission } from "./components.ts";
import { ensurePackage, forgetPackage } from "./packages.ts";
import { checkedHost } from "./host-identity.ts";
import type { ApprovalHandler } from "./approvals.ts";
import { listMcpTools } from "./mcp-tools.ts";
import type { McpToolsOptions } from "./mcp-tools.ts";

/** Where the client's Brain is and who it is there; each falls back to its environment variable. */
export interface BrainOptions {
  /** Default: BRAIN_URL, else http://127.0.0.1:3210. */
  url?: string;
  /** Default: BRAIN_TOKEN. */
  token?: string;
  /** This application's host identity. Default: BRAIN_HOST_ID/BRAIN_HOST_SECRET, else a fresh random one. */
  host?: { id: string; secret: string };
}

/** Options of `brain.close()`. */
export interface CloseOptions {
  /**
   * How long (ms) the calls this client is running may go on to finish by themselves before close
   * ends them `cancelled`. Default 0: end them `cancelled` at once. Either way the runtime journals
   * an explicit cancellation (not the `unknown` of a lost host), and the tools' later `ctx` calls
   * reject with `call_finished`.
   */
  waitMs?: number;
}

/** `brain.sessions.create`: the model, the placed tools, an optional system prompt and default deadline. */
export interface CreateSessionOptions {
  model: ModelConfig;
  tools: PlacedToolSpec[];
  system?: string;
  /** Default relative deadline of each tool call, in ms; absent or 0 = unlimited. */
  deadlineMs?: number;
  /**
   * Decides the session's calls that await approval (tools placed with `approval: "always"`), as
   * `session.onApprovalRequest(handler)` does, from the session's creation until it is deleted or
   * the client closed.
   */
  onApprovalRequest?: ApprovalHandler;
}

/** One page of `brain.sessions.list`: newest first, filtered by what the token may see. */
export interface ListSessionsOptions {
  /** Sessions per page, 1 to 1000; the server's default is 50. */
  limit?: number;
  /** The `next` of the previous page (opaque). */
  cursor?: string;
  /** Only sessions in this state (running: a turn is open). */
  status?: SessionView["status"];
}

/** The sessions API of a client: create, reattach, and list (a page, or every session page by page). */
export interface SessionsApi {
  create(o: CreateSessionOptions): Promise<Session>;
  get(id: string, o?: { tools?: PlacedToolSpec[]; onApprovalRequest?: ApprovalHandler }): Promise<Session>;
  /** One page: `{ sessions, next }`; pass `next` as `cursor` for the following page (absent on the last one). */
  list(o?: ListSessionsOptions): Promise<SessionList>;
  /** Every session the token may see, newest first, fetched a page (`limit`) at a time as the loop asks. */
  all(o?: Omit<ListSessionsOptions, "cursor">): AsyncIterable<SessionView>;
}

function randomId(bytes: number): string {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  return [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}

/** The server URL the user gave, checked: an absolute http(s) URL (a missing scheme is the usual slip). */
function brainUrl(given: string, from: "url" | "BRAIN_URL"): string {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new SdkError("invalid_url", `${from} ${JSON.stringify(given)} is not a URL: give the scheme too, e.g. http://${given.replace(/^\/+/, "") || "127.0.0.1:3210"}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new SdkError("invalid_url", `${from} ${JSON.stringify(given)} must be an http: or https: URL (the Brain server's address, e.g. http://127.0.0.1:3210)`);
  }
  return given.replace(/\/+$/, "");
}

/**
 * A client of one Brain server. All its sessions and tools share one host connection until
 * `await brain.close()`. Platform-neutral: `Brain` of `@aexhq/brain` (Node) and of the Deno module
 * bind it to their platform.
 */
export class BrainClient {
  readonly url: string;
  readonly hostId: string;
  readonly sessions: SessionsApi;
  private readonly http: HttpClient;
  private readonly connection: HostConnection;
  private readonly tokenValue: string | undefined;
  /** Aborted by close(): sessions' approval hooks stop with the client. */
  private readonly closing = new AbortController();

  constructor(private readonly platform: Platform, opts: BrainOptions = {}) {
    this.url = brainUrl(opts.url ?? platform.env("BRAIN_URL") ?? "http://127.0.0.1:3210", opts.url !== undefined ? "url" : "BRAIN_URL");
    this.tokenValue = opts.token ?? platform.env("BRAIN_TOKEN");
    const envId = platform.env("BRAIN_HOST_ID");
    const envSecret = platform.env("BRAIN_HOST_SECRET");
    const host = opts.host !== undefined ? checkedHost(opts.host, "host") : envId && envSecret ? checkedHost({ id: envId, secret: envSecret }, "BRAIN_HOST_ID/BRAIN_HOST_SECRET") : { id: `app-${randomId(8)}`, secret: randomId(24) };
    this.hostId = host.id;
    const token = () => this.token();
    this.http = new HttpClient(this.url, token);
    const ws = new URL("/v1/hosts/connect", this.url);
    ws.protocol = ws.protocol === "https:" ? "wss:" : "ws:";
    this.connection = new HostConnection(platform, ws.toString(), token, host.id, host.secret, this.url);
    this.sessions = { create: (o) => this.create(o), get: (id, o) => this.get(id, o), list: (o) => this.list(o), all: (o) => this.all(o) };
  }

  /** How many WebSockets this client has opened (1 while the first connection holds). */
  get connectionCount(): number {
    return this.connection.connections;
  }

  /** Ids of the sessions whose tool handlers this client holds (created or reattached, not yet deleted). */
  get hostedSessions(): string[] {
    return this.connection.sessionIds;
  }

  private token(): string {
    if (!this.tokenValue) {
      const why = this.platform.unreadableEnv?.("BRAIN_TOKEN");
      throw new SdkError("missing_token", `no Brain token: pass { token } or set BRAIN_TOKEN${why ? ` (${why})` : ""}`);
    }
    return this.tokenValue;
  }

  private async placed(spec: PlacedToolSpec): Promise<PlacedTool> {
    const contract = await spec.tool.contract();
    let placement: Placement;
    const impl = spec.tool.implementation;
    if (spec.env === undefined || spec.env.kind === "host") {
      if (!spec.tool.run) throw new SdkError("unsupported", `tool ${spec.tool.name} has an implementation, not run: place it with { env: brainEnv(...) } or an Environment that interprets it`);
      placement = { kind: "host", hostId: spec.env?.name ?? this.hostId };
      // Environment control is granted by the placement, explicitly; none without it.
      const environments = spec.env?.environments;
      if (environments !== undefined) {
        const { list, create, setup, call } = environments;
        placement.environments = {
          ...(list !== undefined ? { list } : {}),
          ...(create !== undefined ? { create: create.filesystem ? { filesystem: { workspace: create.filesystem.workspace } } : {} } : {}),
          ...(setup !== undefined ? { setup: [...setup] } : {}),
          ...(call !== undefined ? { call: [...call] } : {}),
        };
      }
    } else if (spec.env.kind === "http") {
      if (!spec.tool.run) throw new SdkError("unsupported", `tool ${spec.tool.name} has no run function for an HTTP endpoint to serve`);
      placement = { kind: "http", url: spec.env.url };
    } else if (spec.env.kind === "mcp") {
      // The operator's MCP server: the runtime checks the contract against what the server advertises.
      placement = { kind: "mcp", server: spec.env.name, tool: spec.mcpTool ?? contract.name };
    } else if (spec.env.kind === "http_plain") {
      // A plain-JSON endpoint serves the tool (the v1 http()/httpTool() placements): only its contract travels.
      placement = { kind: "http_plain", url: spec.env.url };
    } else if (spec.env.runtime !== undefined) {
      // A Brain-managed host (docs/managed-hosts.md): the installed package, uploaded by digest.
      const executable = spec.executable;
      if (executable === undefined || !spec.tool.run) {
        throw new SdkError("unsupported", `tool ${spec.tool.name}: brainEnv ${spec.env.name} (runtime ${spec.env.runtime}) runs packaged run tools, imported from a package built with brain-tools; this one has no executable reference`, { tool: spec.tool.name, env: spec.env.name });
      }
      const digest = await ensurePackage(this.platform, this.url, this.token(), executable);
      placement = {
        kind: "managed",
        env: spec.env.name,
        runtime: spec.env.runtime,
        digest,
        executable: { package: executable.package, version: executable.version, module: executable.module, export: executable.export },
        ...(spec.env.filesystem ? { filesystem: { workspace: spec.env.filesystem.workspace } } : {}),
      };
    } else if (isComponent(impl)) {
      const digest = await ensureAdmitted(this.platform, this.url, this.token(), impl);
      placement = { kind: "component", env: spec.env.name, digest, ...(spec.env.filesystem ? { filesystem: { workspace: spec.env.filesystem.workspace } } : {}) };
    } else if (spec.descriptor !== undefined) {
      // The server's operator defines what the named Environment is; the descriptor travels as is.
      placement = { kind: "descriptor", env: spec.env.name, descriptor: spec.descriptor as Extract<Placement, { kind: "descriptor" }>["descriptor"] };
    } else {
      throw new SdkError("unsupported", `tool ${spec.tool.name}: brainEnv runs component(url) and descriptor implementations; a packaged run tool needs brainEnv({ name, runtime: "node" | "deno" })`);
    }
    const approval = spec.approval ?? spec.tool.approval;
    return approval === undefined ? { contract, options: spec.options as Record<string, unknown>, placement } : { contract, options: spec.options as Record<string, unknown>, placement, approval };
  }

  private isMine(t: PlacedTool): boolean {
    return t.placement.kind === "host" && t.placement.hostId === this.hostId;
  }

  private async create(o: CreateSessionOptions): Promise<Session> {
    if (!Array.isArray(o?.tools)) throw new TypeError("sessions.create: tools must be an array of placed tools (call the tool factory)");
    this.token(); // no token: say so (and why, e.g. a missing permission) before connecting anywhere
    let tools = await Promise.all(o.tools.map((t) => this.placed(t)));
    const mine = o.tools.filter((_, i) => this.isMine(tools[i]!));
    if (mine.length) await this.connection.register(tools.filter((t) => this.isMine(t)).map((t) => t.contract));
    const post = () =>
      this.http.request<SessionView>("POST", "/v1/sessions", {
        model: o.model,
        tools,
        ...(o.system !== undefined ? { system: o.system } : {}),
        ...(o.deadlineMs !== undefined ? { deadlineMs: o.deadlineMs } : {}),
      });
    let view: SessionView;
    try {
      view = await post();
    } catch (e) {
      // The server does not know a component or package this client uploaded before (a restarted in-memory
      // server, another node): upload again, once, and create the session again.
      const components = o.tools.map((t) => t.tool.implementation).filter(isComponent);
      const packages = tools.flatMap((t) => (t.placement.kind === "managed" ? [t.placement.digest] : []));
      if (!(e instanceof ProtocolError) || e.code !== "not_found") throw e;
      if (/component [0-9a-f]{64}/.test(e.message) && components.length > 0) for (const c of components) forgetAdmission(this.url, c);
      else if (/package [0-9a-f]{64}/.test(e.message) && packages.length > 0) for (const d of packages) forgetPackage(this.url, d);
      else throw e;
      tools = await Promise.all(o.tools.map((t) => this.placed(t)));
      view = await post();
    }
    this.connection.addSession(view.id, mine);
    return this.handle(view.id, o.onApprovalRequest);
  }

  /**
   * Opens a handle on an existing session. With `tools`, restores their handlers on this host:
   * they must be exactly the session's tools placed on this host, with identical schemas.
   */
  private async get(id: string, o: { tools?: PlacedToolSpec[]; onApprovalRequest?: ApprovalHandler } = {}): Promise<Session> {
    const view = await this.http.request<SessionView>("GET", `/v1/sessions/${encodeURIComponent(id)}`);
    if (o.tools) {
      const original = view.tools.filter((t) => this.isMine(t));
      const given = await Promise.all(o.tools.map(async (t) => ({ spec: t, contract: await t.tool.contract() })));
      const problems: string[] = [];
      if (view.tools.some((t) => t.placement.kind === "host") && original.length === 0) {
        const hosts = [...new Set(view.tools.flatMap((t) => (t.placement.kind === "host" ? [t.placement.hostId] : [])))];
        problems.push(`the session's host tools are placed on ${hosts.join(", ")}, not on this client's host ${this.hostId} (reattach with that host's identity: new Brain({ host: { id, secret } }) or BRAIN_HOST_ID/BRAIN_HOST_SECRET)`);
      }
      for (const t of original) {
        const match = given.find((g) => g.contract.name === t.contract.name);
        if (!match) problems.push(`tool ${t.contract.name} is missing`);
        else if (match.contract.digest !== t.contract.digest) problems.push(`tool ${t.contract.name} changed its advertised schemas (digest ${t.contract.digest} → ${match.contract.digest})`);
      }
      for (const g of given) {
        if (original.some((t) => t.contract.name === g.contract.name)) continue;
        // A tool the session has on another host is part of it: only the host is wrong (said above).
        const elsewhere = view.tools.find((t) => t.contract.name === g.contract.name);
        if (elsewhere === undefined) problems.push(`tool ${g.contract.name} is not part of the session`);
        else if (elsewhere.placement.kind !== "host") problems.push(`tool ${g.contract.name} is placed in the session as ${elsewhere.placement.kind}, not on a host`);
        else if (original.length > 0) problems.push(`tool ${g.contract.name} is placed on host ${elsewhere.placement.hostId}, not on this client's host ${this.hostId}`);
      }
      if (problems.length) throw new SdkError("reattach_mismatch", `cannot reattach session ${id}: ${problems.join("; ")}`, { problems });
      await this.connection.register(given.map((g) => g.contract));
      this.connection.addSession(id, given.map((g) => g.spec));
    }
    return this.handle(id, o.onApprovalRequest);
  }

  /** A handle on session `id`, with its approval hook when one is given. */
  private handle(id: string, onApprovalRequest: ApprovalHandler | undefined): Session {
    const session = new Session(id, this.http, () => this.connection.releaseSession(id), this.closing.signal);
    if (onApprovalRequest !== undefined) session.onApprovalRequest(onApprovalRequest);
    return session;
  }

  private list(o: ListSessionsOptions = {}): Promise<SessionList> {
    const q = new URLSearchParams();
    if (o.limit !== undefined) q.set("limit", String(o.limit));
    if (o.cursor !== undefined) q.set("cursor", o.cursor);
    if (o.status !== undefined) q.set("status", o.status);
    const query = q.toString();
    return this.http.request<SessionList>("GET", `/v1/sessions${query ? `?${query}` : ""}`);
  }

  private async *all(o: Omit<ListSessionsOptions, "cursor"> = {}): AsyncGenerator<SessionView> {
    let cursor: string | undefined;
    do {
      const page = await this.list({ ...o, ...(cursor !== undefined ? { cursor } : {}) });
      yield* page.sessions;
      cursor = page.next;
    } while (cursor !== undefined);
  }

  /**
   * Serves tools on this host for any session placed on it (a named host: other applications place
   * tools here with `hostEnv({ name })`).
   */
  /**
   * The tools of the operator's MCP server `server` (all, or those named in `include`), placed
   * there, for `sessions.create({ tools: [...await brain.mcpTools({ server: "fs" })] })`: their
   * contracts are the server's advertised schemas, as this Brain server lists them.
   */
  mcpTools(o: McpToolsOptions): Promise<PlacedToolSpec[]> {
    this.token();
    return listMcpTools(this.http, o);
  }

  async serve(tools: PlacedToolSpec[]): Promise<void> {
    const contracts = await Promise.all(tools.map((t) => t.tool.contract()));
    this.connection.serve(tools);
    await this.connection.register(contracts);
  }

  /**
   * Closes the client: its host connection, after ending the calls it still runs (`cancelled`, at
   * once or after `waitMs`; see CloseOptions). Safe to call again: a later call waits for the first.
   */
  async close(opts: CloseOptions = {}): Promise<void> {
    const waitMs = opts?.waitMs ?? 0;
    if (typeof waitMs !== "number" || !Number.isFinite(waitMs) || waitMs < 0) {
      throw new TypeError(`brain.close({ waitMs }): a finite number of milliseconds ≥ 0 (a bound), got ${String(waitMs)}`);
    }
    this.closing.abort();
    await this.connection.close(waitMs);
  }
}
