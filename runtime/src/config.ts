import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import type { KeyLimits } from "@aexhq/brain-protocol";
import type { BrainOptions } from "./server.ts";
import { BrainRuntimeError } from "./errors.ts";
import { MAX_STREAM_MS } from "./http/sse.ts";
import { componentMemoryMb } from "./environments/component/memory-setting.ts";
import { parseDescriptorEnvironments } from "./environments/descriptor/environment.ts";
import type { DescriptorEnvironmentConfig } from "./environments/descriptor/environment.ts";
import { parseMcpServers } from "./environments/mcp/config.ts";
import type { McpServerConfig } from "./environments/mcp/config.ts";
import { modelSettingsFromEnv } from "./models/select.ts";
import type { ModelSettings } from "./models/select.ts";
import { LOG_LEVELS } from "./logger.ts";
import type { LogLevel } from "./logger.ts";
import type { TracingSettings } from "./telemetry/tracing-export.ts";
import type { ManagedHostSettings } from "./environments/plugin.ts";

/**
 * BRAIN_HTTP_ENVIRONMENTS: the operator's descriptor Environments as one JSON object,
 * `{"github":{"type":"http_json","baseUrl":"https://api.github.com","headers":{...}}}`.
 */
export function httpEnvironments(env: NodeJS.ProcessEnv): Record<string, DescriptorEnvironmentConfig> | undefined {
  const value = operatorJson(env, "BRAIN_HTTP_ENVIRONMENTS");
  return value === undefined ? undefined : parseDescriptorEnvironments(value, "BRAIN_HTTP_ENVIRONMENTS");
}

/** One operator setting holding a JSON object (it may hold credentials), parsed; undefined when unset or blank. */
function operatorJson(env: NodeJS.ProcessEnv, name: string): unknown {
  const text = env[name];
  if (text === undefined || text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    // V8's message may quote the text, and the text holds credentials: only the position is shown
    // (and the error is no `cause`, which would carry that message into logs).
    const at = /at position (\d+)/.exec(e instanceof Error ? e.message : "")?.[1];
    throw new BrainRuntimeError("invalid_request", `${name} must be a JSON object; it is not valid JSON${at === undefined ? "" : ` (at position ${at})`}`);
  }
}

/**
 * BRAIN_MCP_SERVERS: the operator's MCP servers as one JSON object,
 * `{"fs":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/data"]},"remote":{"url":"https://…","headers":{…}}}`.
 */
export function mcpServers(env: NodeJS.ProcessEnv): Record<string, McpServerConfig> | undefined {
  const value = operatorJson(env, "BRAIN_MCP_SERVERS");
  return value === undefined ? undefined : parseMcpServers(value, "BRAIN_MCP_SERVERS");
}

/** BRAIN_HTTP_TOOL_ORIGINS: comma-separated origins (`https://app.example.com`) HTTP tools may be served from. */
export function httpToolOrigins(env: NodeJS.ProcessEnv): string[] {
  return (env.BRAIN_HTTP_TOOL_ORIGINS ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "").map((s) => new URL(absoluteUrl("BRAIN_HTTP_TOOL_ORIGINS", s)).origin);
}

function absoluteUrl(name: string, value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === "http:" || url.protocol === "https:") return url.href;
  } catch {
    // Handled: not a URL at all is refused just below, like a URL of another scheme.
  }
  throw new BrainRuntimeError("invalid_request", `${name} must be absolute http(s) URLs (comma-separated where several), got ${JSON.stringify(value)}`);
}

/** `brain serve` options from the environment (BRAIN_PORT, BRAIN_HOST, BRAIN_DATA_DIR, ...). */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): BrainOptions & { tokenFile?: string } {
  const journal = env.BRAIN_JOURNAL ?? "sqlite";
  const postgres = /^postgres(ql)?:\/\//.test(journal);
  if (!postgres && journal !== "sqlite" && journal !== "memory") throw new BrainRuntimeError("invalid_request", `BRAIN_JOURNAL must be sqlite, memory or a postgres:// URL, got ${journal}`);
  const sync = env.BRAIN_JOURNAL_SYNC;
  if (sync !== undefined && sync !== "normal" && sync !== "full") throw new BrainRuntimeError("invalid_request", `BRAIN_JOURNAL_SYNC must be normal or full, got ${sync}`);
  const port = Number(env.BRAIN_PORT ?? 3210);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new BrainRuntimeError("invalid_request", `BRAIN_PORT must be a port number, got ${env.BRAIN_PORT}`);
  const maxEmitted = env.BRAIN_MAX_EMITTED_BYTES === undefined ? undefined : Number(env.BRAIN_MAX_EMITTED_BYTES);
  if (maxEmitted !== undefined && (!Number.isInteger(maxEmitted) || maxEmitted < 0)) throw new BrainRuntimeError("invalid_request", `BRAIN_MAX_EMITTED_BYTES must be a non-negative integer`);
  const maxModelCalls = env.BRAIN_MAX_MODEL_CALLS === undefined ? undefined : Number(env.BRAIN_MAX_MODEL_CALLS);
  if (maxModelCalls !== undefined && (!Number.isInteger(maxModelCalls) || maxModelCalls < 1)) throw new BrainRuntimeError("invalid_request", `BRAIN_MAX_MODEL_CALLS must be a positive integer, got ${env.BRAIN_MAX_MODEL_CALLS}`);
  // Read by the component plugin; checked here too so a typo stops the CLI before anything opens.
  componentMemoryMb(env);
  const descriptorEnvironments = httpEnvironments(env);
  const mcp = mcpServers(env);
  const dataDir = resolve(env.BRAIN_DATA_DIR ?? "./.brain");
  const opts: BrainOptions & { tokenFile?: string } = { dataDir, journal: journal as BrainOptions["journal"], port, host: env.BRAIN_HOST ?? "127.0.0.1" };
  if (sync !== undefined) opts.journalSync = sync;
  if (postgres) {
    const leaseMs = env.BRAIN_LEASE_MS === undefined ? undefined : Number(env.BRAIN_LEASE_MS);
    if (leaseMs !== undefined && (!Number.isInteger(leaseMs) || leaseMs < 300)) throw new BrainRuntimeError("invalid_request", `BRAIN_LEASE_MS must be an integer of at least 300 (ms), got ${env.BRAIN_LEASE_MS}`);
    if (leaseMs !== undefined) opts.leaseMs = leaseMs;
    if (env.BRAIN_NODE_ID) {
      if (!/^[A-Za-z0-9_.-]{1,64}$/.test(env.BRAIN_NODE_ID)) throw new BrainRuntimeError("invalid_request", `BRAIN_NODE_ID must be 1-64 letters, digits, '_', '.' or '-', got ${JSON.stringify(env.BRAIN_NODE_ID)}`);
      opts.nodeId = env.BRAIN_NODE_ID;
    }
    if (env.BRAIN_NODE_URL) opts.nodeUrl = absoluteUrl("BRAIN_NODE_URL", env.BRAIN_NODE_URL).replace(/\/$/, "");
  }
  if (maxEmitted !== undefined) opts.maxEmittedBytes = maxEmitted;
  if (maxModelCalls !== undefined) opts.maxModelCalls = maxModelCalls;
  const resident = env.BRAIN_RESIDENT_SESSIONS === undefined ? undefined : Number(env.BRAIN_RESIDENT_SESSIONS);
  if (resident !== undefined && (!Number.isInteger(resident) || resident < 0)) throw new BrainRuntimeError("invalid_request", `BRAIN_RESIDENT_SESSIONS must be a non-negative integer, got ${env.BRAIN_RESIDENT_SESSIONS}`);
  if (resident !== undefined) opts.residentSessions = resident;
  const hostTimeout = env.BRAIN_HOST_TIMEOUT_MS === undefined ? undefined : Number(env.BRAIN_HOST_TIMEOUT_MS);
  if (hostTimeout !== undefined && (!Number.isInteger(hostTimeout) || hostTimeout < 30)) throw new BrainRuntimeError("invalid_request", `BRAIN_HOST_TIMEOUT_MS must be an integer of at least 30 (ms), got ${env.BRAIN_HOST_TIMEOUT_MS}`);
  if (hostTimeout !== undefined) opts.hostTimeoutMs = hostTimeout;
  const maxStream = env.BRAIN_MAX_STREAM_MS === undefined ? undefined : Number(env.BRAIN_MAX_STREAM_MS);
  if (maxStream !== undefined && (!Number.isInteger(maxStream) || maxStream < 100 || maxStream > MAX_STREAM_MS)) throw new BrainRuntimeError("invalid_request", `BRAIN_MAX_STREAM_MS must be an integer of at least 100 (ms) and at most ${MAX_STREAM_MS}, got ${env.BRAIN_MAX_STREAM_MS}`);
  if (maxStream !== undefined) opts.maxStreamMs = maxStream;
  const maxWait = env.BRAIN_MAX_WAIT_MS === undefined ? undefined : Number(env.BRAIN_MAX_WAIT_MS);
  if (maxWait !== undefined && (!Number.isInteger(maxWait) || maxWait < 1)) throw new BrainRuntimeError("invalid_request", `BRAIN_MAX_WAIT_MS must be a positive integer (ms), got ${env.BRAIN_MAX_WAIT_MS}`);
  if (maxWait !== undefined) opts.maxWaitMs = maxWait;
  if (descriptorEnvironments !== undefined) opts.descriptorEnvironments = descriptorEnvironments;
  if (mcp !== undefined) opts.mcpServers = mcp;
  const origins = httpToolOrigins(env);
  if (origins.length > 0) opts.httpToolOrigins = origins;
  if (env.BRAIN_PUBLIC_URL) opts.publicUrl = absoluteUrl("BRAIN_PUBLIC_URL", env.BRAIN_PUBLIC_URL);
  if (env.BRAIN_WORKSPACE_ROOT) opts.workspaceRoot = resolve(env.BRAIN_WORKSPACE_ROOT);
  if (env.BRAIN_TOKEN) opts.token = env.BRAIN_TOKEN;
  else {
    const { token, file } = operatorToken(dataDir);
    opts.token = token;
    opts.tokenFile = file;
  }
  return opts;
}

/**
 * `brain serve`'s flags take effect here: each sets the variable it mirrors in this process's
 * environment before anything reads it, so a flag means exactly what its variable means for every
 * reader (configFromEnv, the defaults startBrain fills in, the processes Brain starts) and no
 * second set of checks exists to drift. Only the CLI calls this; an embedded runtime passes options.
 */
export function setServeVariables(variables: Record<string, string>): void {
  for (const [name, value] of Object.entries(variables)) process.env[name] = value;
}

/** `brain keys …`'s settings: which server (BRAIN_URL, else BRAIN_HOST/BRAIN_PORT) and the operator token (BRAIN_TOKEN, else BRAIN_DATA_DIR's token file). */
export function keysCommandEnv(env: NodeJS.ProcessEnv = process.env): Pick<NodeJS.ProcessEnv, "BRAIN_URL" | "BRAIN_HOST" | "BRAIN_PORT" | "BRAIN_TOKEN" | "BRAIN_DATA_DIR"> {
  const { BRAIN_URL, BRAIN_HOST, BRAIN_PORT, BRAIN_TOKEN, BRAIN_DATA_DIR } = env;
  return { BRAIN_URL, BRAIN_HOST, BRAIN_PORT, BRAIN_TOKEN, BRAIN_DATA_DIR };
}

/**
 * What `startBrain` takes from the process environment for the options it was not given, so an
 * embedded runtime behaves as `brain serve` does: the model providers' credentials, the workspace
 * root, the component memory cap and telemetry, the binaries Brain-managed hosts run on, and the
 * log level. This file is the only one in runtime/src that reads `process.env`
 * (scripts/import-rules.mjs enforces it).
 */
export function environmentDefaults(env: NodeJS.ProcessEnv = process.env): EnvironmentDefaults {
  const level = env.BRAIN_LOG_LEVEL;
  if (level !== undefined && level !== "" && !(LOG_LEVELS as string[]).includes(level)) {
    throw new BrainRuntimeError("invalid_request", `BRAIN_LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got ${JSON.stringify(level)}`);
  }
  return {
    models: modelSettingsFromEnv(env),
    workspaceRoot: env.BRAIN_WORKSPACE_ROOT || undefined,
    componentMemoryMb: componentMemoryMb(env),
    componentTelemetry: Boolean(env.BRAIN_COMPONENT_TELEMETRY),
    componentTranspileCache: env.BRAIN_COMPONENT_TRANSPILE_CACHE || undefined,
    managedHosts: {
      node: env.BRAIN_NODE || process.execPath,
      deno: env.BRAIN_DENO || "deno",
      path: env.PATH ?? "/usr/bin:/bin",
      log: Boolean(env.BRAIN_MANAGED_HOST_LOG),
      npm: env.BRAIN_NPM || defaultNpm(),
      registry: env.BRAIN_MANAGED_REGISTRY || undefined,
      cache: env.BRAIN_MANAGED_CACHE || undefined,
      installScripts: Boolean(env.BRAIN_MANAGED_INSTALL_SCRIPTS),
    },
    logLevel: level ? (level as LogLevel) : "info",
    logJson: logJson(env.BRAIN_LOG_FORMAT),
    tracing: tracingFromEnv(env),
    metricsListen: metricsListen(env.BRAIN_METRICS_LISTEN),
    traceUrl: env.BRAIN_TRACE_URL ? traceUrl(env.BRAIN_TRACE_URL) : undefined,
    keyLimits: keyLimitsFromEnv(env),
  };
}

/** The npm CLI that ships beside this node binary (a Node install's bin/npm), else `npm` on PATH. */
function defaultNpm(): string {
  const beside = join(dirname(process.execPath), "npm");
  return existsSync(beside) ? beside : "npm";
}

/** BRAIN_LOG_FORMAT: json, text, or unset (JSON lines unless stderr is a terminal). */
function logJson(format: string | undefined): boolean {
  if (format === undefined || format === "") return !process.stderr.isTTY;
  if (format === "json" || format === "text") return format === "json";
  throw new BrainRuntimeError("invalid_request", `BRAIN_LOG_FORMAT must be json or text, got ${JSON.stringify(format)}`);
}

/** BRAIN_TRACE_URL: an http(s) URL template holding `{traceId}`. */
function traceUrl(value: string): string {
  if (!value.includes("{traceId}")) throw new BrainRuntimeError("invalid_request", `BRAIN_TRACE_URL must hold {traceId} where the trace id goes, got ${JSON.stringify(value)}`);
  absoluteUrl("BRAIN_TRACE_URL", value.replace("{traceId}", "0"));
  return value;
}

/** BRAIN_METRICS_LISTEN: `host:port` of a second listener serving only GET /metrics, without a token. */
function metricsListen(value: string | undefined): { host: string; port: number } | undefined {
  if (value === undefined || value === "") return undefined;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\[\]]+)):(\d{1,5})$/.exec(value.trim());
  const port = m === null ? NaN : Number(m[3]);
  if (m === null || port > 65535) throw new BrainRuntimeError("invalid_request", `BRAIN_METRICS_LISTEN must be host:port (e.g. 127.0.0.1:9464), got ${JSON.stringify(value)}`);
  return { host: m[1] ?? m[2]!, port };
}

/**
 * Whether, and where, spans are exported: the standard OpenTelemetry variables
 * (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/). Tracing is
 * on when OTEL_TRACES_EXPORTER names `otlp` (or `console`), or when it is unset and an OTLP
 * endpoint is set; OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none keep it off. Spans go as
 * OTLP/HTTP, protobuf-encoded (`http/protobuf`, the specification's default) unless
 * OTEL_EXPORTER_OTLP_PROTOCOL asks for `http/json`; `grpc` is refused. The OTEL_BSP_* variables
 * and OTEL_EXPORTER_OTLP_TIMEOUT size the batching and the export as the SDK's did.
 */
export function tracingFromEnv(env: NodeJS.ProcessEnv): TracingSettings | undefined {
  if ((env.OTEL_SDK_DISABLED ?? "").trim().toLowerCase() === "true") return undefined;
  const traced = env.OTEL_TRACES_EXPORTER === undefined || env.OTEL_TRACES_EXPORTER.trim() === "" ? undefined : env.OTEL_TRACES_EXPORTER.split(",").map((s) => s.trim().toLowerCase());
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (traced === undefined ? !endpoint : traced.includes("none") || traced.length === 0) return undefined;
  for (const e of traced ?? []) if (e !== "otlp" && e !== "console") throw new BrainRuntimeError("invalid_request", `OTEL_TRACES_EXPORTER must be otlp, console or none, got ${JSON.stringify(env.OTEL_TRACES_EXPORTER)}`);
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || DEFAULT_OTLP_PROTOCOL).trim();
  if (protocol !== "http/json" && protocol !== "http/protobuf") throw new BrainRuntimeError("invalid_request", `OTEL_EXPORTER_OTLP_PROTOCOL: Brain exports traces over OTLP/HTTP (http/protobuf or http/json), not ${JSON.stringify(protocol)}`);
  const url = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
    ? absoluteUrl("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
    : `${absoluteUrl("OTEL_EXPORTER_OTLP_ENDPOINT", env.OTEL_EXPORTER_OTLP_ENDPOINT || "http://localhost:4318").replace(/\/+$/, "")}/v1/traces`;
  const settings: TracingSettings = { exporter: traced?.includes("otlp") === false ? "console" : "otlp", url, protocol, serviceName: env.OTEL_SERVICE_NAME || "brain-runtime" };
  const timeout = positiveInteger(env, env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ? "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT" : "OTEL_EXPORTER_OTLP_TIMEOUT");
  if (timeout !== undefined) settings.timeoutMs = timeout;
  const queueSize = positiveInteger(env, "OTEL_BSP_MAX_QUEUE_SIZE");
  if (queueSize !== undefined) settings.maxQueueSize = queueSize;
  const batchSize = positiveInteger(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE");
  if (batchSize !== undefined) settings.maxExportBatchSize = batchSize;
  const delay = positiveInteger(env, "OTEL_BSP_SCHEDULE_DELAY");
  if (delay !== undefined) settings.scheduledDelayMs = delay;
  const headers = keyValues(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS || env.OTEL_EXPORTER_OTLP_HEADERS, "OTEL_EXPORTER_OTLP_HEADERS");
  if (headers !== undefined) settings.headers = headers;
  const attributes = keyValues(env.OTEL_RESOURCE_ATTRIBUTES, "OTEL_RESOURCE_ATTRIBUTES");
  if (attributes !== undefined) settings.resourceAttributes = attributes;
  const sampler = (env.OTEL_TRACES_SAMPLER || "parentbased_always_on").trim().toLowerCase();
  const samplers = ["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"];
  if (!samplers.includes(sampler)) throw new BrainRuntimeError("invalid_request", `OTEL_TRACES_SAMPLER must be one of ${samplers.join(", ")}, got ${JSON.stringify(env.OTEL_TRACES_SAMPLER)}`);
  settings.parentBased = sampler.startsWith("parentbased_");
  if (sampler.endsWith("always_off")) settings.ratio = 0;
  else if (sampler.endsWith("traceidratio")) {
    const ratio = env.OTEL_TRACES_SAMPLER_ARG === undefined || env.OTEL_TRACES_SAMPLER_ARG === "" ? 1 : Number(env.OTEL_TRACES_SAMPLER_ARG);
    if (!(ratio >= 0 && ratio <= 1)) throw new BrainRuntimeError("invalid_request", `OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got ${JSON.stringify(env.OTEL_TRACES_SAMPLER_ARG)}`);
    settings.ratio = ratio;
  }
  return settings;
}

/** OTLP/HTTP's encoding when OTEL_EXPORTER_OTLP_PROTOCOL is unset: the OpenTelemetry specification's default. */
const DEFAULT_OTLP_PROTOCOL = "http/protobuf";

/** A whole number > 0 from the variable `name` (a timeout in ms, a queue size); undefined when unset. */
function positiveInteger(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const text = env[name];
  if (text === undefined || text.trim() === "") return undefined;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n <= 0) throw new BrainRuntimeError("invalid_request", `${name} must be a whole number greater than 0, got ${JSON.stringify(text)}`);
  return n;
}

/** `key1=value1,key2=value2` (values percent-encoded), as the OTel variables spell lists; values never quoted in an error. */
function keyValues(text: string | undefined, name: string): Record<string, string> | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  const out: Record<string, string> = {};
  for (const part of text.split(",")) {
    const at = part.indexOf("=");
    const key = at < 0 ? "" : part.slice(0, at).trim();
    if (key === "") throw new BrainRuntimeError("invalid_request", `${name} must be key=value pairs separated by commas`);
    try {
      out[key] = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      throw new BrainRuntimeError("invalid_request", `${name}: the value of ${key} is not valid percent-encoding`);
    }
  }
  return out;
}

/** The variable of each server-wide default key limit (`brain serve --key-max-*` sets the same). */
export const KEY_LIMIT_VARIABLES: Readonly<Record<keyof KeyLimits, string>> = {
  sessions: "BRAIN_KEY_MAX_SESSIONS",
  callsInFlight: "BRAIN_KEY_MAX_CALLS_IN_FLIGHT",
  streams: "BRAIN_KEY_MAX_STREAMS",
  requestsPerSecond: "BRAIN_KEY_MAX_REQUESTS_PER_SECOND",
  journalBytes: "BRAIN_KEY_MAX_JOURNAL_BYTES",
};

/** The server-wide default limits of API keys (BRAIN_KEY_MAX_*): each a non-negative integer (the rate at least 1); unset or empty: unlimited. */
export function keyLimitsFromEnv(env: NodeJS.ProcessEnv): KeyLimits {
  const out: KeyLimits = {};
  for (const [name, variable] of Object.entries(KEY_LIMIT_VARIABLES) as Array<[keyof KeyLimits, string]>) {
    const text = env[variable];
    if (text === undefined || text.trim() === "") continue;
    const value = Number(text);
    const least = name === "requestsPerSecond" ? 1 : 0;
    if (!/^\s*\d+\s*$/.test(text) || !Number.isSafeInteger(value) || value < least) throw new BrainRuntimeError("invalid_request", `${variable} must be an integer of at least ${least}, got ${JSON.stringify(text)}`);
    out[name] = value;
  }
  return out;
}

export interface EnvironmentDefaults {
  models: ModelSettings;
  workspaceRoot: string | undefined;
  componentMemoryMb: number | undefined;
  componentTelemetry: boolean;
  componentTranspileCache: string | undefined;
  managedHosts: ManagedHostSettings;
  logLevel: LogLevel;
  logJson: boolean;
  /** Undefined: tracing is off (the span writer is never loaded). */
  tracing: TracingSettings | undefined;
  metricsListen: { host: string; port: number } | undefined;
  traceUrl: string | undefined;
  /** Server-wide default limits of API keys (BRAIN_KEY_MAX_*); empty: unlimited. */
  keyLimits: KeyLimits;
}

/** The operator token in `<dataDir>/operator.token`, created once with mode 0600. */
export function operatorToken(dataDir: string): { token: string; file: string } {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, "operator.token");
  if (!existsSync(file)) {
    writeFileSync(file, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600, flag: "wx" });
  }
  chmodSync(file, 0o600);
  return { token: readFileSync(file, "utf8").trim(), file };
}
