/**
 * The flags of `brain serve`. Each one mirrors one environment variable and means exactly what
 * setting it means (the CLI sets the variable for its own process before the configuration is
 * read), so one set of checks and one table of meanings serve both spellings and nothing can drift.
 */
export interface ServeFlag {
  /** `--port`. */
  flag: string;
  /** The variable it mirrors: `BRAIN_PORT`. */
  variable: string;
  /** What its value looks like in the help (`<n>`); absent for a switch, which takes no value and sets "1". */
  value?: string;
  /** One line for `--help`. */
  help: string;
}

export const SERVE_FLAGS: readonly ServeFlag[] = [
  { flag: "--port", variable: "BRAIN_PORT", value: "<n>", help: "TCP port (default 3210; 0 = any free port, the printed URL has the real one)" },
  { flag: "--host", variable: "BRAIN_HOST", value: "<addr>", help: "bind address (default 127.0.0.1)" },
  { flag: "--data-dir", variable: "BRAIN_DATA_DIR", value: "<dir>", help: "journal and operator.token folder (default ./.brain)" },
  { flag: "--journal", variable: "BRAIN_JOURNAL", value: "<kind>", help: "sqlite (default), memory (nothing survives a restart) or a postgres:// URL (several nodes)" },
  { flag: "--journal-sync", variable: "BRAIN_JOURNAL_SYNC", value: "<mode>", help: "SQLite journal: normal (default; survives the process being killed) or full (each commit flushed to the disk first)" },
  { flag: "--token", variable: "BRAIN_TOKEN", value: "<token>", help: "operator token (default: <data-dir>/operator.token, created once); a flag is visible in ps, prefer the variable" },
  { flag: "--public-url", variable: "BRAIN_PUBLIC_URL", value: "<url>", help: "the URL applications reach this server at (HTTP tools' callbacks)" },
  { flag: "--max-emitted-bytes", variable: "BRAIN_MAX_EMITTED_BYTES", value: "<n>", help: "bytes of results + events one activation may emit (default 1048576)" },
  { flag: "--max-model-calls", variable: "BRAIN_MAX_MODEL_CALLS", value: "<n>", help: "model calls one activation may make (default 100)" },
  { flag: "--max-wait-ms", variable: "BRAIN_MAX_WAIT_MS", value: "<ms>", help: "the longest a wait:true message request is held (default 60000)" },
  { flag: "--max-stream-ms", variable: "BRAIN_MAX_STREAM_MS", value: "<ms>", help: "the longest one SSE event stream lasts (default 600000)" },
  { flag: "--host-timeout-ms", variable: "BRAIN_HOST_TIMEOUT_MS", value: "<ms>", help: "a host answering no ping for this long is closed, its calls end unknown (default 6000)" },
  { flag: "--resident-sessions", variable: "BRAIN_RESIDENT_SESSIONS", value: "<n>", help: "settled sessions kept in memory (default 256)" },
  { flag: "--key-max-sessions", variable: "BRAIN_KEY_MAX_SESSIONS", value: "<n>", help: "default limit of every API key: sessions open (all nodes); unset = unlimited" },
  { flag: "--key-max-calls-in-flight", variable: "BRAIN_KEY_MAX_CALLS_IN_FLIGHT", value: "<n>", help: "default limit of every API key: tool calls in flight (per node)" },
  { flag: "--key-max-streams", variable: "BRAIN_KEY_MAX_STREAMS", value: "<n>", help: "default limit of every API key: SSE event streams open (per node)" },
  { flag: "--key-max-requests-per-second", variable: "BRAIN_KEY_MAX_REQUESTS_PER_SECOND", value: "<n>", help: "default limit of every API key: HTTP requests per second (per node)" },
  { flag: "--key-max-journal-bytes", variable: "BRAIN_KEY_MAX_JOURNAL_BYTES", value: "<n>", help: "default limit of every API key: journal bytes of one session" },
  { flag: "--workspace-root", variable: "BRAIN_WORKSPACE_ROOT", value: "<dir>", help: "root of session workspaces for brainEnv filesystem grants" },
  { flag: "--component-memory-mb", variable: "BRAIN_COMPONENT_MEMORY_MB", value: "<n>", help: "JS heap and wasm memory cap of each component worker (default 256, at least 16)" },
  { flag: "--component-transpile-cache", variable: "BRAIN_COMPONENT_TRANSPILE_CACHE", value: "<path>", help: "folder of component transpilations by digest, shared by servers (default: none)" },
  { flag: "--component-telemetry", variable: "BRAIN_COMPONENT_TELEMETRY", help: "log every telemetry line of components at info" },
  { flag: "--http-environments", variable: "BRAIN_HTTP_ENVIRONMENTS", value: "<json>", help: "descriptor Environments as one JSON object (holds credentials: prefer the variable)" },
  { flag: "--mcp-servers", variable: "BRAIN_MCP_SERVERS", value: "<json>", help: "MCP servers as one JSON object: {\"fs\":{\"command\":…,\"args\":[…]}} or {\"name\":{\"url\":…}} (may hold credentials: prefer the variable)" },
  { flag: "--http-tool-origins", variable: "BRAIN_HTTP_TOOL_ORIGINS", value: "<origins>", help: "comma-separated origins HTTP tools may be served from" },
  { flag: "--model-base-urls", variable: "BRAIN_MODEL_BASE_URLS", value: "<urls>", help: "comma-separated further model endpoints sessions may name" },
  { flag: "--node", variable: "BRAIN_NODE", value: "<path>", help: "the node binary Brain-managed hosts run on (default: this node)" },
  { flag: "--deno", variable: "BRAIN_DENO", value: "<path>", help: "the deno binary Brain-managed hosts run on (default: deno on PATH)" },
  { flag: "--managed-host-log", variable: "BRAIN_MANAGED_HOST_LOG", help: "log Brain-managed hosts' stderr" },
  { flag: "--managed-registry", variable: "BRAIN_MANAGED_REGISTRY", value: "<url>", help: "registry Brain-managed packages are installed from when uploaded with a lockfile (default: npm's)" },
  { flag: "--managed-cache", variable: "BRAIN_MANAGED_CACHE", value: "<path>", help: "download cache of those installs (default: one per binding)" },
  { flag: "--managed-install-scripts", variable: "BRAIN_MANAGED_INSTALL_SCRIPTS", help: "run dependencies' lifecycle scripts in those installs (default: off)" },
  { flag: "--npm", variable: "BRAIN_NPM", value: "<path>", help: "the npm CLI of those installs (default: the npm beside this node)" },
  { flag: "--node-id", variable: "BRAIN_NODE_ID", value: "<id>", help: "several nodes: this node's id" },
  { flag: "--node-url", variable: "BRAIN_NODE_URL", value: "<url>", help: "several nodes: the URL other nodes reach this one at" },
  { flag: "--lease-ms", variable: "BRAIN_LEASE_MS", value: "<ms>", help: "several nodes: session and node lease length (default 10000)" },
  { flag: "--log-level", variable: "BRAIN_LOG_LEVEL", value: "<level>", help: "debug, info (default), warn or error" },
  { flag: "--log-format", variable: "BRAIN_LOG_FORMAT", value: "<format>", help: "json (one JSON object per line; the default when stderr is not a terminal) or text" },
  { flag: "--metrics-listen", variable: "BRAIN_METRICS_LISTEN", value: "<host:port>", help: "also serve GET /metrics here, without a token (on the API port it takes the operator token)" },
  { flag: "--trace-url", variable: "BRAIN_TRACE_URL", value: "<url>", help: "a trace viewer's URL with {traceId} in it: the /ui call panel links each call's trace there" },
  { flag: "--otlp-endpoint", variable: "OTEL_EXPORTER_OTLP_ENDPOINT", value: "<url>", help: "export traces over OTLP/HTTP to this collector (e.g. http://127.0.0.1:4318); see docs/observability.md" },
];

/** A command line `brain serve` cannot take: exit code 2 and this message. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** What `brain serve`'s arguments ask for: help, or the variables its flags set. */
export type ServeArgs = { help: true } | { help: false; variables: Record<string, string> };

const BY_FLAG = new Map(SERVE_FLAGS.map((f) => [f.flag, f]));

/**
 * Parses `brain serve`'s arguments: `--port 3211`, `--port=3211`, switches without a value,
 * `--help`/`-h`. An unknown flag, a missing value, a value given to a switch, a flag given twice or
 * a stray positional argument is a UsageError naming it, never silently ignored (`--prot 3211`
 * starting on the default port is how the issue that asked for flags began).
 */
export function parseServeArgs(args: readonly string[]): ServeArgs {
  const variables: Record<string, string> = {};
  const given = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--help" || arg === "-h") return { help: true };
    if (!arg.startsWith("--")) throw new UsageError(`unexpected argument ${JSON.stringify(arg)}: brain serve takes only flags (brain serve --help lists them)`);
    const eq = arg.indexOf("=");
    const name = eq < 0 ? arg : arg.slice(0, eq);
    const flag = BY_FLAG.get(name);
    if (flag === undefined) throw new UsageError(`unknown flag ${name}${suggestion(name)} (brain serve --help lists the flags)`);
    if (given.has(name)) throw new UsageError(`${name} is given twice`);
    given.add(name);
    if (flag.value === undefined) {
      if (eq >= 0) throw new UsageError(`${name} is a switch and takes no value (got ${JSON.stringify(arg.slice(eq + 1))})`);
      variables[flag.variable] = "1";
      continue;
    }
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else if (i + 1 < args.length && !args[i + 1]!.startsWith("--")) value = args[++i];
    if (value === undefined) throw new UsageError(`${name} needs a value: ${name} ${flag.value} (or ${name}=${flag.value})`);
    variables[flag.variable] = value;
  }
  return { help: false, variables };
}

/** " (did you mean --port?)" for a flag one or two edits away from a real one, else "". */
function suggestion(name: string): string {
  let best: string | undefined;
  let bestDistance = 3;
  for (const f of BY_FLAG.keys()) {
    const d = distance(name, f);
    if (d < bestDistance) [best, bestDistance] = [f, d];
  }
  return best === undefined ? "" : ` (did you mean ${best}?)`;
}

/** Levenshtein distance; the flags are short, so the plain table is enough. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** `brain serve --help`: every flag with the variable it mirrors. */
export function serveHelp(): string {
  const left = SERVE_FLAGS.map((f) => `${f.flag}${f.value ? ` ${f.value}` : ""}`);
  const width = Math.max(...left.map((l) => l.length));
  const rows = SERVE_FLAGS.map((f, i) => `  ${left[i]!.padEnd(width)}  ${f.variable}: ${f.help}`);
  return `usage: brain serve [flags]

Starts the Brain server in the foreground; Ctrl-C (SIGINT) or SIGTERM stops it cleanly.
Each flag mirrors the environment variable named beside it and wins over it; --flag=value works too.

${rows.join("\n")}
  ${"-h, --help".padEnd(width)}  this help

Model providers are configured by environment only (they are credentials): OPENAI_API_KEY,
OPENAI_BASE_URL, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL.`;
}

/** `brain --help`: the commands. */
export const BRAIN_HELP = `usage: brain <command> [flags]

Commands:
  serve                 start the Brain server (the default); brain serve --help lists its flags
  keys create <name>    create an API key on the running server (printed once)
  keys list             list the API keys
  keys revoke <id>      revoke an API key
  keys limits <id> [<limit>=<n>|none ...]
                        set or show an API key's limits (brain keys --help)
  help                  this help

Examples:
  brain serve --port 3211 --data-dir ./data
  brain serve --journal memory --port 0
  BRAIN_TOKEN=$(cat .brain/operator.token) brain keys create billing-app
  brain keys limits 0123456789ab sessions=20 requestsPerSecond=50`;
