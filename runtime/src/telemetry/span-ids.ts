import { randomFillSync } from "node:crypto";

/**
 * Random trace and span ids for Brain's span writer (brain-tracer.ts), as lowercase hex, the form
 * `@opentelemetry/api`'s SpanContext holds. One randomFillSync fills a pool for many ids: a call
 * of its own per id (as `crypto.randomBytes(8)`) costs more than the hex conversion itself.
 */
const POOL = 8192;
const pool = Buffer.allocUnsafe(POOL);
let at = POOL;

function take(bytes: number): string {
  if (at + bytes > POOL) {
    randomFillSync(pool);
    at = 0;
  }
  const hex = pool.toString("hex", at, at + bytes);
  at += bytes;
  return hex;
}

const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/** 16 random bytes; never all zero (an invalid id to the W3C spec). */
export function newTraceId(): string {
  let id = take(16);
  while (id === ZERO_TRACE) id = take(16);
  return id;
}

/** 8 random bytes; never all zero. */
export function newSpanId(): string {
  let id = take(8);
  while (id === ZERO_SPAN) id = take(8);
  return id;
}
