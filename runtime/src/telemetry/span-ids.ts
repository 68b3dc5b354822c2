import { randomFillSync } from "node:crypto";

/**
 * Random trace and span ids for Brain's span writer (brain-tracer.ts), kept both ways: as bytes,
 * which the protobuf encoder copies (otlp-protobuf.ts), and as lowercase hex, the form
 * `@opentelemetry/api`'s SpanContext holds and `traceparent` carries. One randomFillSync fills a
 * pool for many ids, and the pool is turned into hex once: an id's text is a substring of that
 * text, which V8 makes a slice of it (no copy) for 13 characters and more, and its bytes are where
 * they were drawn. A call into C++ per id (`randomBytes(8)`, or a Buffer's toString("hex") per id)
 * cost more than the rest of making the span, and decoding the hex back to bytes for every span
 * encoded was a tenth of encoding it. A slice keeps its pool's text (8 KiB) alive while it lives,
 * and a span its pool's bytes; the ids a runtime keeps (the session viewer's ring of recent trace
 * ids, telemetry.ts) hold at most a few hundred KiB of it.
 */
const POOL_BYTES = 4096;

/** The random bytes of many ids and their hex (two digits a byte). A pool is never refilled: spans keep pointing into it. */
export interface IdPool {
  readonly bytes: Buffer;
  readonly hex: string;
}

let pool: IdPool = { bytes: Buffer.alloc(0), hex: "" };
/** The next unused byte of `pool`. */
let at = 0;

/** The pool the last `draw` took its bytes from. */
export function idPool(): IdPool {
  return pool;
}

/** `n` random bytes of the current pool (a new pool when it has too few left): their offset in idPool(). */
export function draw(n: number): number {
  if (at + n > pool.bytes.length) {
    const bytes = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
    pool = { bytes, hex: bytes.toString("hex") };
    at = 0;
  }
  const start = at;
  at += n;
  return start;
}

/** The hex of `length` bytes at `offset` of `p`. */
export function hexOf(p: IdPool, offset: number, length: number): string {
  return p.hex.substring(2 * offset, 2 * (offset + length));
}

/** Whether `length` bytes at `offset` are all zero: an invalid id to the W3C spec, drawn again. */
export function isZero(p: IdPool, offset: number, length: number): boolean {
  const b = p.bytes;
  for (let i = offset; i < offset + length; i++) if (b[i] !== 0) return false;
  return true;
}

/** 16 random bytes, as hex; never all zero (a trace id, for tests: the writer draws its own, brain-tracer.ts). */
export function newTraceId(): string {
  let o = draw(16);
  while (isZero(pool, o, 16)) o = draw(16);
  return hexOf(pool, o, 16);
}
