import { BrainRuntimeError } from "../../errors.ts";

/** An MCP server Brain starts and owns, spoken to over its stdin/stdout. */
export interface McpStdioServerConfig {
  command: string;
  args?: string[];
  /** Added to the few variables the MCP SDK passes on by default (HOME, PATH, …): never Brain's whole environment. */
  env?: Record<string, string>;
  cwd?: string;
  /** How long `initialize` may take (ms); default 10 s. */
  initializeTimeoutMs?: number;
}

/** An MCP server reached over Streamable HTTP; `headers` (credentials) are sent with every request. */
export interface McpHttpServerConfig {
  url: string;
  headers?: Record<string, string>;
  initializeTimeoutMs?: number;
}

/** One operator-defined MCP server (BRAIN_MCP_SERVERS, startBrain({ mcpServers })): started by Brain over stdio, or reached over Streamable HTTP. */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

export const DEFAULT_INITIALIZE_TIMEOUT_MS = 10_000;

// The names brainEnv and mcpEnv accept (McpPlacement.server).
const SERVER_NAME = /^[a-zA-Z0-9._:-]{1,128}$/;
const STDIO_KEYS = ["command", "args", "env", "cwd", "initializeTimeoutMs"];
const HTTP_KEYS = ["url", "headers", "initializeTimeoutMs"];
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function stringMap(v: unknown, where: string, key: RegExp | undefined): Record<string, string> {
  if (!isObject(v) || Object.values(v).some((x) => typeof x !== "string")) throw new BrainRuntimeError("invalid_request", `${where} must be an object of string values`);
  if (key !== undefined) for (const k of Object.keys(v)) if (!key.test(k)) throw new BrainRuntimeError("invalid_request", `${where} has an invalid header name ${JSON.stringify(k)}`);
  return { ...(v as Record<string, string>) };
}

/**
 * Checks the operator's MCP servers (startBrain's `mcpServers`, the CLI's BRAIN_MCP_SERVERS);
 * `source` names where they came from in every message. Values of env, headers, args and URLs
 * are never echoed: they may hold credentials.
 */
export function parseMcpServers(value: unknown, source: string): Record<string, McpServerConfig> {
  if (!isObject(value)) throw new BrainRuntimeError("invalid_request", `${source} must be an object mapping server names to {"command":…,"args":[…]} (stdio) or {"url":"https://…"} (Streamable HTTP)`);
  const out: Record<string, McpServerConfig> = {};
  for (const [name, def] of Object.entries(value)) {
    if (!SERVER_NAME.test(name)) throw new BrainRuntimeError("invalid_request", `${source} must name servers with 1-128 letters, digits, ".", "_", ":" or "-", got ${JSON.stringify(name)}`);
    const where = `${source}.${name}`;
    if (!isObject(def)) throw new BrainRuntimeError("invalid_request", `${where} must be an object`);
    const stdio = def.command !== undefined;
    if (stdio === (def.url !== undefined)) throw new BrainRuntimeError("invalid_request", `${where} must have exactly one of "command" (a stdio server Brain starts) and "url" (a Streamable HTTP server)`);
    const allowed = stdio ? STDIO_KEYS : HTTP_KEYS;
    const extra = Object.keys(def).find((k) => !allowed.includes(k));
    if (extra !== undefined) throw new BrainRuntimeError("invalid_request", `${where} has unknown key ${JSON.stringify(extra)} (a ${stdio ? "stdio" : "Streamable HTTP"} server takes ${allowed.join(", ")})`);
    const t = def.initializeTimeoutMs;
    if (t !== undefined && (typeof t !== "number" || !Number.isInteger(t) || t < 1)) throw new BrainRuntimeError("invalid_request", `${where}.initializeTimeoutMs must be a positive integer (ms)`);
    const timeout = t === undefined ? {} : { initializeTimeoutMs: t as number };
    if (stdio) {
      if (typeof def.command !== "string" || def.command === "") throw new BrainRuntimeError("invalid_request", `${where}.command must be a non-empty string`);
      if (def.args !== undefined && (!Array.isArray(def.args) || def.args.some((a) => typeof a !== "string"))) throw new BrainRuntimeError("invalid_request", `${where}.args must be an array of strings`);
      if (def.cwd !== undefined && (typeof def.cwd !== "string" || def.cwd === "")) throw new BrainRuntimeError("invalid_request", `${where}.cwd must be a non-empty string`);
      out[name] = {
        command: def.command,
        ...(def.args === undefined ? {} : { args: [...(def.args as string[])] }),
        ...(def.env === undefined ? {} : { env: stringMap(def.env, `${where}.env`, undefined) }),
        ...(def.cwd === undefined ? {} : { cwd: def.cwd as string }),
        ...timeout,
      };
    } else {
      let url: URL | undefined;
      try {
        url = typeof def.url === "string" ? new URL(def.url) : undefined;
      } catch {
        // refused just below, like a URL of another scheme
      }
      if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) throw new BrainRuntimeError("invalid_request", `${where}.url must be an absolute http(s) URL`);
      out[name] = { url: url.href, ...(def.headers === undefined ? {} : { headers: stringMap(def.headers, `${where}.headers`, HEADER_NAME) }), ...timeout };
    }
  }
  return out;
}

/** The values to keep out of logs and error bodies (headers and env values may be credentials). */
export function mcpSecrets(servers: Readonly<Record<string, McpServerConfig>>): string[] {
  return Object.values(servers).flatMap((s) => ("url" in s ? Object.values(s.headers ?? {}) : Object.values(s.env ?? {})));
}
