// From index.ts, not server.ts: the index also plugs in the component environment.
import { startBrain } from "./index.ts";
import { configFromEnv, keysCommandEnv } from "./config.ts";
import { KEYS_USAGE, keysCommand } from "./keys-command.ts";

const USAGE = `usage: brain serve   (brain keys create|list|revoke: see brain keys)

Environment: BRAIN_PORT (3210), BRAIN_HOST (127.0.0.1), BRAIN_DATA_DIR (./.brain),
BRAIN_TOKEN (else <dataDir>/operator.token), BRAIN_MAX_EMITTED_BYTES, BRAIN_JOURNAL (sqlite|memory|postgres://...),
BRAIN_NODE_ID, BRAIN_NODE_URL, BRAIN_LEASE_MS (10000) for several nodes on one PostgreSQL,
BRAIN_WORKSPACE_ROOT, BRAIN_COMPONENT_MEMORY_MB (256; JS heap and linear memory of each component worker),
BRAIN_HTTP_ENVIRONMENTS (descriptor environments as JSON: {"github":{"type":"http_json","baseUrl":"...","headers":{...}}}),
BRAIN_HTTP_TOOL_ORIGINS (origins HTTP tools may be served from), BRAIN_PUBLIC_URL (callback URL base),
BRAIN_MAX_MODEL_CALLS (100 per activation), BRAIN_RESIDENT_SESSIONS (256 settled sessions kept in memory),
BRAIN_HOST_TIMEOUT_MS (6000; a host answering no ping for this long is closed, its calls end unknown), OPENAI_API_KEY / OPENAI_BASE_URL, ANTHROPIC_API_KEY /
ANTHROPIC_BASE_URL, BRAIN_MODEL_BASE_URLS (further model endpoints sessions may name).`;

/** Where the journal is, for the start banner; a PostgreSQL URL without its password. */
function journalText(opts: ReturnType<typeof configFromEnv>): string {
  if (opts.journal === "memory") return "memory";
  if (opts.journal === undefined || opts.journal === "sqlite") return `${opts.dataDir}/journal.sqlite`;
  const url = new URL(opts.journal);
  if (url.password) url.password = "***";
  return `PostgreSQL ${url.href} (one node of several; BRAIN_LEASE_MS ${opts.leaseMs ?? 10000})`;
}

async function main(argv: string[]): Promise<number> {
  const command = argv[0] ?? "serve";
  if (command === "help" || command === "--help" || command === "-h") {
    console.log(USAGE);
    return 0;
  }
  if (command === "keys") {
    if (argv.length === 1) {
      console.log(KEYS_USAGE);
      return 2;
    }
    return keysCommand(argv.slice(1), keysCommandEnv(), (line) => console.log(line));
  }
  if (command !== "serve") {
    console.error(`unknown command ${command}\n${USAGE}`);
    return 2;
  }
  // The handlers are installed before the server starts and stay until the process exits: a
  // terminal's Ctrl-C reaches every process in the foreground group, so a launcher (npm start, npx,
  // a tsx fallback) that also passes the signal on delivers it twice, and a second SIGINT must not
  // take Node's default action (exit without "stopped") while close() flushes the journal.
  let stoppingSince = 0;
  let requested: () => void = () => {};
  const stopRequested = new Promise<void>((resolve) => (requested = resolve));
  const stop = (signal: NodeJS.Signals) => {
    if (stoppingSince) {
      // A copy of the first signal arrives within milliseconds; one sent seconds later is a user
      // insisting on a shutdown that hangs.
      if (Date.now() - stoppingSince < 2_000) return;
      console.error(`brain: ${signal} again while stopping; exiting without a clean shutdown`);
      process.exit(130);
    }
    stoppingSince = Date.now();
    console.log(`brain: ${signal}, shutting down`);
    requested();
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  const opts = configFromEnv();
  const brain = await startBrain(opts);
  console.log(`brain listening on ${brain.url}`);
  console.log(opts.tokenFile ? `operator token file: ${opts.tokenFile}` : "operator token: from BRAIN_TOKEN");
  console.log(`journal: ${journalText(opts)}`);
  await stopRequested;
  await brain.close();
  console.log("brain: stopped");
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(`brain: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
