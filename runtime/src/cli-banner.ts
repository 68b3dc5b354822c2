import type { configFromEnv } from "./config.ts";

type ServeConfig = ReturnType<typeof configFromEnv>;

/** Where the journal is, for the start banner; a PostgreSQL URL without its password. */
export function journalText(opts: ServeConfig): string {
  if (opts.journal === "memory") return "memory";
  if (opts.journal === undefined || opts.journal === "sqlite") return `${opts.dataDir}/journal.sqlite`;
  const url = new URL(opts.journal);
  if (url.password) url.password = "***";
  return `PostgreSQL ${url.href} (one node of several; BRAIN_LEASE_MS ${opts.leaseMs ?? 10000})`;
}

/** A path as one POSIX shell word, so the printed line can be pasted as it is. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * What `brain serve` prints once it listens: the URL (tests and scripts wait for the first line),
 * the session viewer, the journal, and two lines to paste into another terminal so an SDK app or
 * `brain keys` finds this server. The token itself is never printed: logs of a service keep what
 * it prints, so the line reads the token file (or names the variable it came from).
 */
export function startBanner(url: string, opts: ServeConfig): string {
  const token = opts.tokenFile ? `export BRAIN_TOKEN=$(cat ${shellWord(opts.tokenFile)})` : "export BRAIN_TOKEN=<the token given in BRAIN_TOKEN or --token>";
  return [
    `brain listening on ${url}`,
    `session viewer: ${url}/ui`,
    opts.tokenFile ? `operator token file: ${opts.tokenFile}` : "operator token: from BRAIN_TOKEN",
    `journal: ${journalText(opts)}`,
    "to use this server from another terminal (SDK apps, brain keys):",
    `  export BRAIN_URL=${url}`,
    `  ${token}`,
  ].join("\n");
}
