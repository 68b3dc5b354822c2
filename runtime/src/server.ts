import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { WebSocketServer } from "ws";
import { LIMITS } from "@aexhq/brain-protocol";
import type { KeyLimits, Placement } from "@aexhq/brain-protocol";
import type { JournalStore } from "./journal/store.ts";
import { MemoryStore } from "./journal/memory.ts";
import { SqliteStore } from "./journal/sqlite.ts";
import { PostgresStore } from "./journal/postgres.ts";
import { NodeJournal } from "./cluster/node-journal.ts";
import { ClusterNode, DEFAULT_LEASE_MS } from "./cluster/node.ts";
import { Leases } from "./cluster/leases.ts";
import { NodeFence } from "./cluster/fence.ts";
import { HostRelay } from "./cluster/host-relay.ts";
import { LINK_PATH, PeerLink } from "./cluster/peer-link.ts";
import { HostRegistry } from "./hosts/registry.ts";
import { HostConnection } from "./hosts/connection.ts";
import { HostConnections } from "./hosts/connections.ts";
import { HostEnvironment } from "./environments/host.ts";
import type { Environment } from "./dispatch/environment.ts";
import { Dispatcher } from "./dispatch/dispatcher.ts";
import { pastCallsIn } from "./dispatch/past-calls.ts";
import { SessionManager } from "./sessions/manager.ts";
import { Residency } from "./sessions/residency.ts";
import { DEFAULT_MAX_WAIT_MS, handle } from "./http/routes.ts";
import { DEFAULT_MAX_STREAM_MS, MAX_STREAM_MS, OpenStreams } from "./http/sse.ts";
import { requestUrl } from "./http/path.ts";
import type { RouteDeps } from "./http/routes.ts";
import { hostsRoute } from "./environments/host-route.ts";
import { SharedLogins } from "./ui/logins.ts";
import { uiRoute } from "./ui/routes.ts";
import { authorizeSession } from "./http/session-access.ts";
import { KeyRing } from "./credentials/keys.ts";
import { TenantGate } from "./limits/tenant-gate.ts";
import type { Principal } from "./credentials/keys.ts";
import { Redactor } from "./redact.ts";
import { BrainRuntimeError } from "./errors.ts";
import type { ModelSettings } from "./models/select.ts";
import type { DescriptorEnvironmentConfig } from "./environments/descriptor/environment.ts";
import type { McpServerConfig } from "./environments/mcp/config.ts";
import { mcpSecrets } from "./environments/mcp/config.ts";
import { defaultEnvironments } from "./environments/defaults.ts";
import type { BrainInternals, EnvironmentPlugin, EnvironmentSettings, PluginContext } from "./environments/plugin.ts";
import { environmentDefaults } from "./config.ts";
import { messageOf, scopedLogger, stderrLogger } from "./logger.ts";
import type { Logger } from "./logger.ts";
import type { TracerProvider } from "@opentelemetry/api";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { Telemetry } from "./telemetry/telemetry.ts";
import { startTracing } from "./telemetry/tracing-export.ts";
import { routeOf } from "./telemetry/http-route.ts";
import { parseTraceparent } from "./telemetry/traceparent.ts";
import { listenForMetrics, metricsRoute } from "./http/metrics-route.ts";
import { mcpRoute } from "./mcp/route.ts";
import { OriginGuard } from "./mcp/origin-guard.ts";
import { VERSION } from "./http/routes.ts";

export { defaultEnvironments };
export type { BrainInternals, EnvironmentPlugin, EnvironmentSettings, PluginContext };

/**
 * `startBrain` options. Each one left out falls back to its BRAIN_* variable where there is one
 * (runtime/README.md), so an embedded runtime behaves as `brain serve` does.
 */
export interface BrainOptions {
  /** Data folder; ":memory:" means an in-memory journal. Default "./.brain". */
  dataDir?: string;
  /**
   * "sqlite" (default: `<dataDir>/journal.sqlite`), "memory", or a `postgres://` URL: this process
   * is then one node of several sharing that database (issue 20; runtime/README "Several nodes").
   */
  journal?: "sqlite" | "memory" | `postgres://${string}` | `postgresql://${string}`;
  /**
   * The SQLite journal's durability (BRAIN_JOURNAL_SYNC). "normal" (default): a commit survives the
   * process being killed; an OS crash or power loss may lose the last moments. "full": every group
   * commit is also flushed to the disk before it is acknowledged (one `fdatasync` each).
   */
  journalSync?: "normal" | "full";
  /** This node's id, in every log entry; with a PostgreSQL journal also its id among the nodes (BRAIN_NODE_ID). Default a random one per start. */
  nodeId?: string;
  /**
   * With a PostgreSQL journal: how long a node keeps its sessions without renewing its lease
   * (BRAIN_LEASE_MS, default 10000): a node that dies has its sessions taken over after this.
   */
  leaseMs?: number;
  /** With a PostgreSQL journal: the URL the other nodes reach this one at (BRAIN_NODE_URL); default the listening URL. */
  nodeUrl?: string;
  /** 0 = any free port. Default 3210. */
  port?: number;
  host?: string;
  /** Operator bearer token; a random one when absent. */
  token?: string;
  maxEmittedBytes?: number;
  /**
   * Settled sessions (no work in flight) kept in memory, least recently used out (BRAIN_RESIDENT_SESSIONS);
   * the others page back in from the journal when touched. Default DEFAULT_RESIDENT_SESSIONS (256).
   */
  residentSessions?: number;
  /**
   * A host connection that answers no WebSocket ping for this long is closed and its open calls end
   * `unknown` (BRAIN_HOST_TIMEOUT_MS); default 6000. Pings go every third of it.
   */
  hostTimeoutMs?: number;
  /**
   * The longest a `wait: true` message request is held (BRAIN_MAX_WAIT_MS), default 60000: a turn
   * still running then is answered 202 started, and the client asks again with the same Idempotency-Key.
   */
  maxWaitMs?: number;
  /** Model calls one activation may make (BRAIN_MAX_MODEL_CALLS); default LIMITS.defaultMaxModelCalls. */
  maxModelCalls?: number;
  /** Real model providers' endpoints and credentials; default: read from the process environment (OPENAI_API_KEY, ...). */
  models?: ModelSettings;
  /** Root under which session workspaces live (for brainEnv filesystem grants). */
  workspaceRoot?: string;
  /** false: run without the component environment (component placements fail as `unsupported`). Default true. */
  components?: boolean;
  /**
   * Descriptor Environments by name, e.g. `{ github: { type: "http_json", baseUrl, headers } }`
   * (BRAIN_HTTP_ENVIRONMENTS for the CLI). Applications refer to them by name only; a bad entry
   * makes startBrain reject.
   */
  descriptorEnvironments?: Readonly<Record<string, DescriptorEnvironmentConfig>>;
  /**
   * MCP servers by name (BRAIN_MCP_SERVERS for the CLI): `{ fs: { command, args?, env?, cwd? } }`
   * (stdio: Brain starts and owns the process) or `{ remote: { url, headers? } }` (Streamable HTTP).
   * Applications place their tools by name only (docs/mcp.md); a bad entry makes startBrain reject.
   */
  mcpServers?: Readonly<Record<string, McpServerConfig>>;
  /** Origins (`https://app.example.com`) HTTP tools may be served from (BRAIN_HTTP_TOOL_ORIGINS); none by default. */
  httpToolOrigins?: string[];
  /** The URL applications reach this server at, for HTTP tools' callbacks (BRAIN_PUBLIC_URL); default the listening URL. */
  publicUrl?: string;
  /**
   * How long one SSE stream (`GET …/events` with `Accept: text/event-stream`) lasts at most
   * (BRAIN_MAX_STREAM_MS); default DEFAULT_MAX_STREAM_MS (10 minutes). The client resumes with
   * Last-Event-ID: an EventSource and the SDK's `session.events({ follow: true })` do so by themselves.
   */
  maxStreamMs?: number;
  /**
   * The Environments this runtime has besides host placements, installed in order; default
   * `defaultEnvironments()` (components, managed hosts, descriptors, HTTP tools, Environment
   * control). `[...defaultEnvironments(), myPlugin]` adds one without touching the runtime.
   */
  environments?: EnvironmentPlugin[];
  /** Where the runtime says what happened (failures it survived, start and stop); default: stderr, from BRAIN_LOG_LEVEL (info) up. */
  logger?: Logger;
  /** Each component worker's memory cap in MiB (BRAIN_COMPONENT_MEMORY_MB); default 256. */
  componentMemoryMb?: number;
  /** Log components' telemetry lines (BRAIN_COMPONENT_TELEMETRY). */
  componentTelemetry?: boolean;
  /** A folder shared by servers for components' jco transpilations, by digest (BRAIN_COMPONENT_TRANSPILE_CACHE); default none. */
  componentTranspileCache?: string;
  /**
   * Server-wide default limits of every API key that sets no value of its own (BRAIN_KEY_MAX_*;
   * docs/keys-and-limits.md); default none (unlimited). The operator token is never limited.
   */
  keyLimits?: KeyLimits;
  /** Brain-managed hosts: the node and deno binaries (BRAIN_NODE, BRAIN_DENO), the PATH they are looked up on, and whether their stderr is logged (BRAIN_MANAGED_HOST_LOG). */
  managedHosts?: Partial<EnvironmentSettings["managedHosts"]>;
  /**
   * Where the runtime's spans go: an application's own OpenTelemetry tracer provider. Default: one
   * the runtime sets up from the OTEL_* variables when they ask for traces (docs/observability.md),
   * else none (no span is made).
   */
  tracerProvider?: TracerProvider;
  /**
   * Where an operator's trace viewer shows a trace, with `{traceId}` in it (BRAIN_TRACE_URL, e.g.
   * `http://jaeger:16686/trace/{traceId}`): the /ui call panel links each call's trace id there.
   */
  traceUrl?: string;
  /** A second listener serving only `GET /metrics`, without a token (BRAIN_METRICS_LISTEN `host:port`); port 0 = any free port. */
  metricsListen?: { host: string; port: number };
  /**
   * The MCP endpoint (`/v1/mcp`, docs/mcp.md): `deadlineMs`, a call's deadline when its tools/call
   * names none (default: none; the client's own request timeout cancels it); `allowedHosts`, host
   * names it answers besides loopback ones and the public URL's (DNS-rebinding protection);
   * `idleMs`, how long an MCP session without requests or open calls lasts (default one hour).
   */
  mcp?: { deadlineMs?: number; allowedHosts?: string[]; idleMs?: number };
}

/** A running Brain runtime: where it listens, its operator token, and `close()` (flushes the journal). */
export interface BrainServer {
  /** http://HOST:PORT */
  url: string;
  token: string;
  /** The metrics listener's URL (`…/metrics`), when `metricsListen` / BRAIN_METRICS_LISTEN asked for one. */
  metricsUrl?: string;
  close(): Promise<void>;
}

/** Starts the Brain runtime: journal, recovery, HTTP API and the host WebSocket channel. */
export async function startBrain(opts: BrainOptions = {}): Promise<BrainServer & { internals: BrainInternals }> {
  const dataDir = opts.dataDir ?? "./.brain";
  // What the options leave out comes from the process environment, read in config.ts only.
  const defaults = environmentDefaults();
  const nodeId = opts.nodeId ?? `node_${randomBytes(6).toString("hex")}`;
  // The server's secrets, kept out of everything it journals, answers, logs and sends to hosts.
  const redactor = new Redactor();
  // Every entry names this node and is redacted, whichever logger it ends in (logger.ts scopedLogger).
  const logger = scopedLogger(opts.logger ?? stderrLogger({ level: defaults.logLevel, json: defaults.logJson }), { nodeId }, redactor, opts.logger === undefined ? defaults.logLevel : undefined);
  const postgresUrl = typeof opts.journal === "string" && /^postgres(ql)?:\/\//.test(opts.journal) ? opts.journal : undefined;
  const memory = postgresUrl === undefined && (opts.journal === "memory" || dataDir === ":memory:");
  const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
  const maxStreamMs = opts.maxStreamMs ?? DEFAULT_MAX_STREAM_MS;
  if (!Number.isInteger(maxStreamMs) || maxStreamMs < 1 || maxStreamMs > MAX_STREAM_MS) throw new BrainRuntimeError("invalid_request", `maxStreamMs must be a positive integer (ms) up to ${MAX_STREAM_MS}, got ${maxStreamMs}`);
  for (const [name, value, min] of [["mcp.deadlineMs", opts.mcp?.deadlineMs, 0], ["mcp.idleMs", opts.mcp?.idleMs, 1]] as const) {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < min)) throw new BrainRuntimeError("invalid_request", `${name} must be an integer (ms) of at least ${min}, got ${value}`);
  }
  let store: JournalStore;
  let nodeJournal: NodeJournal | undefined;
  // One node of several: every write proves this node's run and the session's lease token (the fence).
  const fence = postgresUrl === undefined ? undefined : new NodeFence(nodeId);
  if (postgresUrl !== undefined && fence !== undefined) {
    mkdirSync(dataDir, { recursive: true });
    const pg = await PostgresStore.open(postgresUrl, { fence, idleTransactionTimeoutMs: leaseMs });
    nodeJournal = new NodeJournal(pg, fence, logger);
    await nodeJournal.loadCredentials();
    store = nodeJournal;
  } else if (memory) store = new MemoryStore();
  else {
    mkdirSync(dataDir, { recursive: true });
    store = new SqliteStore(join(dataDir, "journal.sqlite"), { sync: opts.journalSync === "full", logger });
  }
  const token = opts.token ?? randomBytes(24).toString("base64url");
  const models = opts.models ?? defaults.models;
  redactor.add(models.openai?.apiKey);
  redactor.add(models.anthropic?.apiKey);
  for (const env of Object.values(opts.descriptorEnvironments ?? {})) for (const value of Object.values(env.headers ?? {})) redactor.add(value);
  for (const value of mcpSecrets(opts.mcpServers ?? {})) redactor.add(value);
  // The collector's headers (an API key, usually) are secrets like the others.
  for (const value of Object.values(defaults.tracing?.headers ?? {})) redactor.add(value);
  let tracerProvider = opts.tracerProvider;
  let stopTracing: (() => Promise<void>) | undefined;
  let spansLost: (() => { dropped: number; failed: number }) | undefined;
  if (tracerProvider === undefined && defaults.tracing !== undefined) {
    const started = await startTracing(defaults.tracing, VERSION, logger);
    tracerProvider = started.provider;
    stopTracing = started.shutdown;
    spansLost = started.lost;
    logger.info("tracing: spans are exported", { exporter: defaults.tracing.exporter, endpoint: defaults.tracing.url, protocol: defaults.tracing.protocol, serviceName: defaults.tracing.serviceName });
  }
  const keys = await KeyRing.load(store, token, redactor, logger);
  keys.defaultLimits = { ...(opts.keyLimits ?? defaults.keyLimits) };
  const registry = await HostRegistry.load(store, redactor);
  const hostConnections = new HostConnections();
  // Filled below: host placements first, then what the plugins provide.
  const environments = new Map<Placement["kind"], Environment>();
  // The sessions in memory; the dispatcher finds a call through its session there.
  const residency = new Residency(opts.residentSessions);
  const telemetry = new Telemetry(
    {
      openCalls: () => {
        let n = 0;
        for (const call of residency.calls()) if (!call.finishedCommitted) n++;
        return n;
      },
      residentSessions: () => residency.size,
      connectedHosts: () => hostConnections.size,
      ...(spansLost === undefined ? {} : { spansLost }),
    },
    tracerProvider,
    redactor,
    VERSION,
  );
  store.observeCommits?.((records, startedAt, seconds, error) => telemetry.commit(store.kind, records, startedAt, seconds, error));
  const dispatcher = new Dispatcher(environments, residency, pastCallsIn(store), logger, telemetry);
  dispatcher.callsLimit = (owner) => keys.limitsOf(owner)?.callsInFlight;
  const limits = { maxEmittedBytes: opts.maxEmittedBytes ?? LIMITS.defaultMaxEmittedBytes, maxModelCalls: opts.maxModelCalls ?? LIMITS.defaultMaxModelCalls };
  const sessions = new SessionManager(store, residency, dispatcher, limits, models, redactor, logger, keys);
  const tenants = new TenantGate(keys, store);
  // Assigned once the server listens.
  let url = "";
  let relay: HostRelay | undefined;
  let cluster: ClusterNode | undefined;
  if (nodeJournal !== undefined) {
    const leases = new Leases(nodeJournal.pg.readers, nodeId, leaseMs, fence);
    const node = new ClusterNode({ journal: nodeJournal, leases, sessions, keys, registry, logger, metrics: telemetry.metrics });
    // What the node hears of: a write found the session's lease taken; a session left memory.
    nodeJournal.onLost((id) => node.lost(id));
    sessions.onDropped((id) => node.released(id));
    cluster = node;
    relay = new HostRelay(nodeJournal.pg.readers, nodeId, token, () => opts.nodeUrl ?? url, hostConnections, dispatcher, () => node.refreshCredentials(), leaseMs + 2_000, logger);
  }
  const hostEnv = new HostEnvironment(registry, hostConnections, relay);
  environments.set("host", hostEnv);
  // A node of several recovers by taking over what dead nodes (its own earlier run included) left open.
  if (nodeJournal === undefined) await sessions.recover();

  const streams = new OpenStreams();
  const extra: RouteDeps["extra"] = [metricsRoute(telemetry.metrics), hostsRoute(registry, hostEnv, sessions, store)];
  // The session viewer (/ui) logs in with what the API accepts, and reads the API with it.
  const traceUrl = opts.traceUrl ?? defaults.traceUrl;
  const open: RouteDeps["open"] = [
    uiRoute({
      accepts: async (credential) => {
        // Several nodes: a key issued through another node a moment ago is looked up (as for the API).
        if (keys.authenticate(credential) === undefined) await cluster?.knowToken(credential);
        return keys.authenticate(credential) !== undefined;
      },
      // Several nodes: a login made through one node is valid on every node (sealed with the operator token they share).
      logins: nodeJournal === undefined ? undefined : new SharedLogins(nodeJournal.pg.shared, token),
      isOperator: (credential) => keys.authenticate(credential)?.kind === "operator",
      traces: async (sessionId, credential) => {
        const principal = keys.authenticate(credential);
        if (principal === undefined) throw new BrainRuntimeError("unauthorized", "the login's credential is no longer accepted");
        await authorizeSession(sessions, sessionId, principal);
        return traceUrl === undefined ? { traces: telemetry.tracesOf(sessionId) } : { traces: telemetry.tracesOf(sessionId), url: traceUrl };
      },
    }),
  ];
  // MCP clients (mcp/): Host and Origin must name this server (loopback, its public URL, the operator's list).
  const mcpHosts = [...(opts.mcp?.allowedHosts ?? [])];
  if (opts.publicUrl !== undefined) mcpHosts.push(new URL(opts.publicUrl).hostname);
  if (opts.host !== undefined && opts.host !== "0.0.0.0" && opts.host !== "::") mcpHosts.push(opts.host.includes(":") ? `[${opts.host}]` : opts.host);
  const mcp = mcpRoute({ keys, tenants, sessions, hostTools: (owner) => hostEnv.servedBy(owner), guard: new OriginGuard(mcpHosts), logger, redactor, deadlineMs: opts.mcp?.deadlineMs, idleMs: opts.mcp?.idleMs });
  open.push(mcp.route);
  const hostTokens = new Map<string, Principal>();
  const hostBindings = new Map<string, { sessionId: string; env: string }>();
  const settings: EnvironmentSettings = {
    dataDir: memory ? undefined : dataDir,
    workspaceRoot: opts.workspaceRoot ?? defaults.workspaceRoot,
    components: opts.components !== false,
    componentMemoryMb: opts.componentMemoryMb ?? defaults.componentMemoryMb,
    componentTelemetry: opts.componentTelemetry ?? defaults.componentTelemetry,
    componentTranspileCache: opts.componentTranspileCache ?? defaults.componentTranspileCache,
    descriptorEnvironments: opts.descriptorEnvironments ?? {},
    mcpServers: opts.mcpServers ?? {},
    httpToolOrigins: opts.httpToolOrigins ?? [],
    managedHosts: { ...defaults.managedHosts, ...opts.managedHosts },
  };
  const closers: Array<() => void | Promise<void>> = [];
  const context: PluginContext = {
    settings,
    logger,
    storeKind: store.kind,
    uploads: nodeJournal?.pg.shared,
    provide: (kind, env) => {
      if (environments.has(kind)) throw new BrainRuntimeError("conflict", `two Environments serve placement kind ${kind}`);
      environments.set(kind, env);
    },
    environment: (kind) => environments.get(kind),
    provideControl: (handler) => (dispatcher.environmentControl = handler),
    route: (route) => void extra.push(route),
    openRoute: (route) => void open.push(route),
    onClose: (fn) => void closers.unshift(fn),
    publicUrl: () => opts.publicUrl ?? url,
    localUrl: () => url,
    sessions,
    dispatcher,
    hosts: hostEnv,
    hostTokens,
    hostBindings,
  };
  const closeEnvironments = async () => {
    for (const env of environments.values()) await env.close?.();
    for (const fn of closers) await fn();
  };
  try {
    for (const plugin of opts.environments ?? defaultEnvironments()) await plugin.install(context);
  } catch (e) {
    // A plugin refusing its configuration stops the start; what was opened so far is released.
    dispatcher.close();
    sessions.close();
    await closeEnvironments();
    await store.flush();
    await store.close();
    await stopTracing?.().catch(() => {
      // Handled: the start failed with `e`, which is what the caller hears; no span is owed.
    });
    throw e;
  }
  const internals: BrainInternals = { store, sessions, dispatcher, environments, hostTokens };

  const connections = new Set<HostConnection>();
  const links = new Set<PeerLink>();
  // A revoked key's SSE streams end and its hosts are disconnected (their open calls end `unknown`):
  // on the node that revoked it at once, on the others when their credentials refresh (every third
  // of BRAIN_LEASE_MS) finds it revoked.
  const stopRevoking = keys.onRevoked((keyId) => {
    tenants.forget(keyId);
    streams.endKey(keyId, "the API key of this stream was revoked");
    hostEnv.disconnect(registry.ownedBy(keyId), `the API key ${keyId} was revoked`);
  });
  const deps: RouteDeps = { keys, redactor, telemetry, sessions, store, streams, tenants, maxStreamMs, extra, open, maxWaitMs: opts.maxWaitMs ?? DEFAULT_MAX_WAIT_MS };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    observeRequest(telemetry, req, res);
    if (cluster === undefined) void handle(req, res, deps);
    else void cluster.route(req, res, (request) => handle(request, res, deps));
  });
  // Frames up to 4x the limit still arrive, so they get a clear `frame_too_large` error frame and
  // the connection stays; beyond that ws closes with 1009 "Max payload size exceeded".
  const wss = new WebSocketServer({ noServer: true, maxPayload: LIMITS.maxFrameBytes * 4 });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    let path: string;
    try {
      path = requestUrl(req).pathname;
    } catch {
      path = "";
    }
    if (path === LINK_PATH && relay !== undefined) {
      // Node-to-node relay links: only the operator token every node shares opens one.
      const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1]?.trim();
      if (bearer === undefined || keys.authenticate(bearer)?.kind !== "operator") {
        socket.end("HTTP/1.1 401 Unauthorized\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
        return;
      }
      const handler = relay;
      wss.handleUpgrade(req, socket, head, (ws) => {
        const link = new PeerLink(ws, handler, `the node at ${req.socket.remoteAddress ?? "?"}:${req.socket.remotePort ?? "?"}`, logger);
        links.add(link);
        link.onClosed(() => links.delete(link));
      });
      return;
    }
    if (path !== "/v1/hosts/connect") {
      socket.end("HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const conn = new HostConnection(ws, {
        authenticate: (credential) => keys.authenticate(credential) ?? hostTokens.get(credential),
        knowCredential: cluster === undefined ? undefined : (token) => cluster!.knowToken(token),
        redactor,
        hostTimeoutMs: opts.hostTimeoutMs,
        leaseMs,
        registry,
        dispatcher,
        bindingOf: (hostId) => hostBindings.get(hostId),
        attach: (hostId, c) => {
          logger.debug("a host connected", { hostId });
          hostEnv.attach(hostId, c);
          return relay?.linked(hostId);
        },
        detach: (c) => {
          if (c.hostId !== undefined) logger.debug("a host disconnected", { hostId: c.hostId });
          hostEnv.detach(c);
          connections.delete(c);
          if (relay !== undefined && c.hostId !== undefined && hostEnv.connection(c.hostId) === undefined) void relay.unlinked(c.hostId).catch((e) => logger.warn("forgetting a host's link to this node failed; it is swept with the node's row", { hostId: c.hostId, error: messageOf(e) }));
        },
      });
      connections.add(conn);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 3210, opts.host ?? "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : opts.port;
  const host = opts.host ?? "127.0.0.1";
  url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  await cluster?.start(opts.nodeUrl ?? url);
  const metricsAt = opts.metricsListen ?? defaults.metricsListen;
  const metricsListener = metricsAt === undefined ? undefined : await listenForMetrics(telemetry.metrics, metricsAt.host, metricsAt.port);

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      // Stop timers and loops first so nothing new is admitted; open calls stay open in the
      // journal and recovery ends them `unknown` on the next start.
      dispatcher.close();
      sessions.close();
      hostEnv.close();
      for (const c of connections) c.close();
      relay?.close();
      for (const l of links) l.close();
      stopRevoking();
      streams.endAll("the server is shutting down");
      await mcp.close();
      wss.close();
      await closeEnvironments();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await store.flush();
      // After the last write: the lease ends now, so the other nodes take the open sessions at once.
      await cluster?.stop();
      await store.close();
      await metricsListener?.close();
      // Last: the spans of the shutdown's own commits are exported too (a failing collector is logged, never thrown).
      await stopTracing?.().catch((e: unknown) => logger.warn("tracing: exporting the last spans failed", { error: messageOf(e) }));
    })());

  return { url, token, close, internals, ...(metricsListener === undefined ? {} : { metricsUrl: metricsListener.url }) };
}

const METHODS = new Set(["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]);

/**
 * Counts every request by method, route template and status when its answer ends, and (tracing
 * on) gives it a server span, continuing the caller's trace when it sends a `traceparent`.
 */
function observeRequest(telemetry: Telemetry, req: IncomingMessage, res: ServerResponse): void {
  const started = performance.now();
  const method = METHODS.has(req.method ?? "") ? req.method! : "_OTHER";
  let route: string;
  try {
    route = routeOf(requestUrl(req).pathname);
  } catch {
    // Handled: a target that is no URL is answered 400 by the route; its label is `other`.
    route = "other";
  }
  const span = telemetry.tracing
    ? telemetry.remoteChild(`${method} ${route}`, parseTraceparent(header(req.headers.traceparent)), { "http.request.method": method, "http.route": route }, SpanKind.SERVER)
    : undefined;
  telemetry.bindRequest(req, span);
  res.once("close", () => {
    telemetry.metrics.httpRequest(method, route, res.statusCode, (performance.now() - started) / 1000);
    if (span === undefined) return;
    span.setAttribute("http.response.status_code", res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
