import { BrainRuntimeError } from "../errors.ts";

/**
 * SQLSTATE classes of a server that cannot serve now rather than a statement that is wrong:
 * 08 connection exception, 53 insufficient resources, 57 operator intervention (a shutdown or
 * restart: "terminating connection due to administrator command", "the database system is
 * starting up"), 58 system error.
 */
const UNAVAILABLE_CLASSES = new Set(["08", "53", "57", "58"]);
/** Socket errors of a server that is down, restarting or cut off. */
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN", "ENOTFOUND"]);
/** What node-postgres throws, without a code, for a connection that ended or never came. */
const DRIVER_MESSAGES = /Connection terminated|Connection ended|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable/i;

/** Whether `e` says the database cannot be reached now (retrying later may help), not that a statement failed. */
export function isDatabaseUnreachable(e: unknown): boolean {
  if (e instanceof BrainRuntimeError) return false;
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === "string") return NETWORK_CODES.has(code) || (/^[0-9A-Z]{5}$/.test(code) && UNAVAILABLE_CLASSES.has(code.slice(0, 2)));
  return e instanceof Error && DRIVER_MESSAGES.test(e.message);
}

/**
 * What a store operation answers when the database is down or restarting: `unavailable`
 * (HTTP 503, retryable), keeping the driver's error as `cause`, instead of the driver's error
 * surfacing as `internal`. `writing`: a commit whose answer was lost may or may not have been
 * written, and the message says so (a retry with the same Idempotency-Key is answered once).
 */
export function storeError(e: unknown, writing = false): unknown {
  if (!isDatabaseUnreachable(e)) return e;
  const what = writing ? "the write may or may not have been committed (a retry with the same Idempotency-Key runs at most once)" : "nothing was changed";
  return new BrainRuntimeError("unavailable", `PostgreSQL cannot be reached now (${(e as Error).message}); ${what}: try again`, undefined, true, { cause: e });
}
