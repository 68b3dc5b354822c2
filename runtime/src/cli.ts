// From index.ts, not server.ts: the index also plugs in the component environment.
import { startBrain } from "./index.ts";
import { configFromEnv, keysCommandEnv, setServeVariables } from "./config.ts";
import { KEYS_USAGE, keysCommand } from "./keys-command.ts";
import { BRAIN_HELP, SERVE_FLAGS, UsageError, parseServeArgs, serveHelp } from "./cli-flags.ts";
import { startBanner } from "./cli-banner.ts";

async function main(argv: string[]): Promise<number> {
  // `brain` alone, or `brain --port 3211`, is `brain serve`.
  const command = argv[0] === undefined || (argv[0].startsWith("-") && argv[0] !== "-h" && argv[0] !== "--help") ? "serve" : argv[0];
  const rest = command === argv[0] ? argv.slice(1) : argv;
  if (command === "help" || command === "--help" || command === "-h") {
    console.log(BRAIN_HELP);
    return 0;
  }
  if (command === "keys") {
    if (rest[0] === "--help" || rest[0] === "-h") {
      console.log(KEYS_USAGE);
      return 0;
    }
    if (rest.length === 0) {
      console.error(KEYS_USAGE);
      return 2;
    }
    return keysCommand(rest, keysCommandEnv(), (line) => console.log(line));
  }
  if (command !== "serve") {
    console.error(`brain: unknown command ${JSON.stringify(command)}\n\n${BRAIN_HELP}`);
    return 2;
  }
  let parsed;
  try {
    parsed = parseServeArgs(rest);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`brain: ${e.message}`);
    return 2;
  }
  if (parsed.help) {
    console.log(serveHelp());
    return 0;
  }
  setServeVariables(parsed.variables);
  let opts: ReturnType<typeof configFromEnv>;
  try {
    opts = configFromEnv();
  } catch (e) {
    // A bad value given as a flag is a usage error (2) and says so; from the environment it stays 1.
    const flag = SERVE_FLAGS.find((f) => f.variable in parsed.variables && (e as Error).message?.startsWith(f.variable));
    if (flag === undefined) throw e;
    console.error(`brain: ${flag.flag}: ${(e as Error).message}`);
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
  const brain = await startBrain(opts);
  console.log(startBanner(brain.url, opts));
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
