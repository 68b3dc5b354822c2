// What a guest writes to stdout and stderr, kept per call in the worker and handed to the main
// thread with the end of `run` (the `done` message), so it arrives in order with the trap it may
// explain. Plain JavaScript, like worker.mjs.
//
// preview2-shim's wasi:cli stdout/stderr streams write to this thread's process.stdout/stderr;
// this worker thread runs only its guest, so whatever reaches them is the guest's. Only the tail
// is kept (a guest that prints megabytes costs a bounded buffer); the byte count says how much
// there was.

/** Bytes kept per stream per call: the end of a traceback or panic message. */
export const OUTPUT_TAIL_BYTES = 8 * 1024;

function tailBuffer(limit) {
  let chunks = [];
  let held = 0;
  let total = 0;
  return {
    push(bytes) {
      total += bytes.length;
      chunks.push(bytes.length > limit ? bytes.subarray(bytes.length - limit) : bytes);
      held += Math.min(bytes.length, limit);
      while (held - chunks[0].length >= limit) held -= chunks.shift().length;
    },
    /** { text, bytes } of what was written since the last take, or undefined when nothing was. */
    take() {
      if (total === 0) return undefined;
      const all = Buffer.concat(chunks);
      const out = { text: all.subarray(Math.max(0, all.length - limit)).toString("utf8"), bytes: total };
      chunks = [];
      held = 0;
      total = 0;
      return out;
    },
  };
}

function toBytes(chunk, encoding) {
  if (typeof chunk === "string") return Buffer.from(chunk, typeof encoding === "string" ? encoding : "utf8");
  return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/**
 * Replaces `write` of this thread's stdout and stderr with a per-call tail buffer (nothing is
 * forwarded to the parent's streams: the main thread logs what it receives). `take()` returns
 * `{ stdout?, stderr? }` for the call that just ended.
 */
export function captureOutput(streams = { stdout: process.stdout, stderr: process.stderr }, limit = OUTPUT_TAIL_BYTES) {
  const buffers = {};
  for (const [name, stream] of Object.entries(streams)) {
    const buffer = (buffers[name] = tailBuffer(limit));
    stream.write = (chunk, encoding, callback) => {
      buffer.push(toBytes(chunk, encoding));
      const cb = typeof encoding === "function" ? encoding : callback;
      if (typeof cb === "function") queueMicrotask(cb);
      return true;
    };
  }
  return {
    take() {
      const out = {};
      for (const [name, buffer] of Object.entries(buffers)) {
        const t = buffer.take();
        if (t) out[name] = t;
      }
      return Object.keys(out).length === 0 ? undefined : out;
    },
  };
}
