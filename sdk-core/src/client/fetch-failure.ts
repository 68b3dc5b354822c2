import { SdkError } from "../errors.ts";

/**
 * The error of a fetch that failed without an HTTP answer, telling apart "could not reach Brain"
 * (nothing was sent: refused, no route, no such name) from "the connection was lost" (it broke
 * while the request was in flight, e.g. the server stopped: the request may have been handled).
 * fetch only throws a TypeError, so the difference is read from what Node (undici: `cause.code`)
 * and Deno (the message) say about it; anything not known to be a loss stays `connection_failed`.
 */
export function fetchFailure(e: unknown, base: string, what: string, startedAt: number): SdkError {
  const detail = describe(e);
  // How long the request was out when it failed: a pooled connection the server had already closed
  // fails at once, one cut while Brain worked on the request (send() waiting for its turn) later.
  const afterMs = Date.now() - startedAt;
  if (wasLost(e)) {
    return new SdkError("connection_lost", `the connection to Brain at ${base} closed before it answered ${what} (the server stopped or the network failed; the request may have been handled): ${detail}`, { afterMs });
  }
  return new SdkError("connection_failed", `could not reach Brain at ${base}: ${detail}`, { afterMs });
}

/** Node's socket errors of a connection that was open (undici), and Deno's words for the same. */
const LOST_CODES = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE", "UND_ERR_CLOSED"]);
const LOST_WORDS = /connection closed before message completed|connection reset|broken pipe|unexpected eof|incomplete ?message|SendRequest|other side closed/i;

function wasLost(e: unknown): boolean {
  for (let c: unknown = e, depth = 0; c !== undefined && c !== null && depth < 4; c = (c as { cause?: unknown }).cause, depth++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === "string" && LOST_CODES.has(code)) return true;
    const message = (c as { message?: unknown }).message;
    if (typeof message === "string" && LOST_WORDS.test(message)) return true;
  }
  return false;
}

/** "fetch failed" alone says nothing: add what its cause says (Node keeps the reason there). */
function describe(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  const cause = (e as { cause?: { message?: unknown; code?: unknown } } | undefined)?.cause;
  const why = typeof cause?.message === "string" && cause.message !== "" ? cause.message : typeof cause?.code === "string" ? cause.code : undefined;
  return why !== undefined && !message.includes(why) ? `${message} (${why})` : message;
}
