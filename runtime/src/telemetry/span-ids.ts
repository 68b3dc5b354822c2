import { randomFillSync } from "node:crypto";

/**
 * Random trace and span ids for Brain's span writer (brain-tracer.ts), as lowercase hex, the form
 * `@opentelemetry/api`'s SpanContext holds. One randomFillSync fills a pool for many ids, and the
 * pool is turned into hex once: an id is a substring of that text, which V8 makes a slice of it
 * (no copy) for 13 characters and more. A call into C++ per id (`randomBytes(8)`, or a Buffer's
 * toString("hex") per id) cost more than the rest of making the span. A slice keeps its pool's
 * text (8 KiB) alive while it lives; the ids a runtime keeps (the session viewer's ring of recent
 * trace ids, telemetry.ts) hold at most a few hundred KiB of it.
 */
const POOL_BYTES = 4096;
const bytes = Buffer.allocUnsafe(POOL_BYTES);
let hex = "";
/** The next unused hex digit of `hex`. */
let at = 0;

function take(digits: number): string {
  if (at + digits > hex.length) {
    randomFillSync(bytes);
    hex = bytes.toString("hex");
    at = 0;
  }
  const id = hex.substring(at, at + digits);
  at += digits;
  return id;
}

const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/** 16 random bytes; never all zero (an invalid id to the W3C spec). */
export function newTraceId(): string {
  let id = take(32);
  while (id === ZERO_TRACE) id = take(32);
  return id;
}

/** 8 random bytes; never all zero. */
export function newSpanId(): string {
  let id = take(16);
  while (id === ZERO_SPAN) id = take(16);
  return id;
}
