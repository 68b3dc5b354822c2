/**
 * The runtime's one way to say something to the operator: levelled, with structured fields, never
 * a bare `console` call. Failures the runtime survives (a lease renewal, a background write, a
 * takeover) are logged here instead of dropped. The default writes one line per entry to stderr;
 * `startBrain({ logger })` takes any other (a test collects entries, an application forwards them).
 */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** The structured part of a log entry (ids, counts, an error's message), printed after the message. */
export type LogFields = Record<string, unknown>;

/** Where the runtime says what it survived: `startBrain({ logger })`, default `stderrLogger` from BRAIN_LOG_LEVEL. */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export const LOG_LEVELS = Object.keys(RANK) as LogLevel[];

/**
 * Writes `brain <level>: <message> {fields}` lines (or one JSON object per line with `json`) to
 * stderr, from `level` up. An Error among the fields is written as its message and code.
 */
export function stderrLogger(opts: { level?: LogLevel; json?: boolean; write?: (line: string) => void } = {}): Logger {
  const min = RANK[opts.level ?? "info"];
  const write = opts.write ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const entry = (level: LogLevel) => (message: string, fields?: LogFields) => {
    if (RANK[level] < min) return;
    const plain = fields === undefined ? undefined : plainFields(fields);
    if (opts.json) write(JSON.stringify({ time: new Date().toISOString(), level, message, ...plain }));
    else write(`brain ${level}: ${message}${plain === undefined || Object.keys(plain).length === 0 ? "" : ` ${JSON.stringify(plain)}`}`);
  };
  return { debug: entry("debug"), info: entry("info"), warn: entry("warn"), error: entry("error") };
}

/** What a scoped logger needs of the redactor (redact.ts): the server's secrets replaced in any value. */
interface Redacting {
  redact<T>(value: T): T;
}

/**
 * The logger the runtime's parts are given: every entry carries `fields` (the node id), and its
 * message and fields are cleared of the server's secrets (provider keys, API keys, host secrets,
 * the operator token) before the underlying logger sees them, whatever a caller put in. An entry's
 * own fields win over the scope's (a relayed call may name another node). With `level`, entries
 * below it are dropped here.
 */
export function scopedLogger(logger: Logger, fields: LogFields, redactor: Redacting, level?: LogLevel): Logger {
  // Below the level the entry is dropped before any redaction work (a debug entry costs nothing at info).
  const min = level === undefined ? 0 : RANK[level];
  const entry = (level: LogLevel) => (message: string, own?: LogFields) => {
    if (RANK[level] < min) return;
    logger[level](redactor.redact(message), redactor.redact(own === undefined ? { ...fields } : { ...fields, ...plainFields(own) }));
  };
  return { debug: entry("debug"), info: entry("info"), warn: entry("warn"), error: entry("error") };
}

/** Says nothing (tests that assert on output of their own). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

function plainFields(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [k, v] of Object.entries(fields)) out[k] = v instanceof Error ? errorField(v) : v;
  return out;
}

function errorField(e: Error): { message: string; code?: unknown } {
  const code = (e as { code?: unknown }).code;
  return code === undefined ? { message: e.message } : { message: e.message, code };
}

/** The message of anything thrown, for a log line. */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
