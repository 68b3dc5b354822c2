// The worker side of the runtime <-> component worker channel. The layout is documented in
// channel.ts (the main-thread side); the sizes arrive in workerData from its CHANNEL constant.
// Plain JavaScript, like worker.mjs, because worker threads do not run the tsx loader.
import { spinAllowed } from "./spin-policy.mjs";

const CMD_SEQ = 0;
const CMD_LEN = 1;
const REQ_W = 2;
const REQ_R = 3;
const SLEEPING = 4;
/**
 * How long the worker polls for a command before it sleeps in the kernel. While it polls, the
 * main thread's send() skips Atomics.notify, a futex syscall that measured ~15-40 µs on the main
 * thread here (the runtime's one thread for every session). A host call's reply (a commit)
 * usually comes within this; a sleeping worker is woken as before.
 */
const POLL_MS = 0.1;
/** How long an idle worker blocks before it yields to its event loop. */
const IDLE_BLOCK_MS = 2;

/**
 * @param {SharedArrayBuffer} sab
 * @param {{ headerBytes: number, commandBytes: number, requestBytes: number }} sizes
 */
export function workerChannel(sab, sizes) {
  const h = new Int32Array(sab, 0, sizes.headerBytes / 4);
  const command = new Uint8Array(sab, sizes.headerBytes, sizes.commandBytes);
  const ringOffset = sizes.headerBytes + sizes.commandBytes;
  const ring = new Uint8Array(sab, ringOffset, sizes.requestBytes);
  const ring32 = new Int32Array(sab, ringOffset, sizes.requestBytes / 4);
  const size = sizes.requestBytes;
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let seen = Atomics.load(h, CMD_SEQ);

  const poll = () => {
    if (Atomics.load(h, CMD_SEQ) !== seen || !spinAllowed()) return;
    const until = performance.now() + POLL_MS;
    let n = 0;
    while (Atomics.load(h, CMD_SEQ) === seen && ((++n & 31) !== 0 || performance.now() < until));
  };
  // The flag says "notify me"; it is set before the last check, so a command written meanwhile is
  // either seen by Atomics.wait (the value changed) or its writer sees the flag and notifies.
  const sleep = (timeout) => {
    Atomics.store(h, SLEEPING, 1);
    Atomics.wait(h, CMD_SEQ, seen, timeout);
    Atomics.store(h, SLEEPING, 0);
  };
  const readCommand = () => {
    seen = Atomics.load(h, CMD_SEQ);
    const len = Atomics.load(h, CMD_LEN);
    return JSON.parse(decoder.decode(command.slice(0, len)));
  };

  return {
    /**
     * Appends one request to the ring and (unless `wake` is false) wakes the main thread. Blocks
     * while the ring is full (the main thread drains it on its next turn). False when the request
     * can never fit. An unwoken request is read with the next woken one, or when the worker ends.
     */
    request(message, wake = true) {
      const bytes = encoder.encode(JSON.stringify(message));
      const need = 4 + ((bytes.length + 3) & ~3);
      if (need > size) return false;
      const w = Atomics.load(h, REQ_W);
      for (;;) {
        const r = Atomics.load(h, REQ_R);
        if (size - ((w - r) | 0) >= need) break;
        Atomics.wait(h, REQ_R, r);
      }
      const pos = (w >>> 0) & (size - 1);
      ring32[pos / 4] = bytes.length;
      const start = (pos + 4) & (size - 1);
      const first = Math.min(bytes.length, size - start);
      ring.set(bytes.subarray(0, first), start);
      if (first < bytes.length) ring.set(bytes.subarray(first), 0);
      Atomics.store(h, REQ_W, (w + need) | 0);
      if (wake) Atomics.notify(h, REQ_W);
      return true;
    },
    /**
     * Blocks until the main thread writes the next command (the reply to a host call). No spinning
     * first: measured on 2 cores it did not help (the main thread needs a core to commit).
     */
    receive() {
      poll();
      while (Atomics.load(h, CMD_SEQ) === seen) sleep();
      return readCommand();
    },
    /**
     * Waits for the next command (the next invocation) while idle: a short blocking wait first
     * (`blockMs`), since a binding's calls often come back to back, then without blocking this
     * thread's event loop (which forwards the guest's stdout/stderr and must run between calls).
     */
    async receiveAsync(blockMs = IDLE_BLOCK_MS) {
      poll();
      if (Atomics.load(h, CMD_SEQ) === seen) sleep(blockMs);
      while (Atomics.load(h, CMD_SEQ) === seen) {
        Atomics.store(h, SLEEPING, 1);
        const r = Atomics.waitAsync(h, CMD_SEQ, seen);
        if (r.async) await r.value;
        Atomics.store(h, SLEEPING, 0);
      }
      return readCommand();
    },
  };
}
