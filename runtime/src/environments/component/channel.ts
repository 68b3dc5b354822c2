import { spinAllowed } from "./spin-policy.mjs";

/**
 * The main-thread side of the channel between the runtime and one component worker: a
 * SharedArrayBuffer instead of postMessage, so an invocation costs no MessagePort hops (a
 * postMessage round trip measured ~40 µs here, an Atomics one ~13 µs).
 *
 * Layout (the worker side, channel-worker.mjs, must agree; both read CHANNEL):
 *   Int32 header, HEADER_BYTES long:
 *     [0] CMD_SEQ  bumped by the main thread after writing a command; the worker waits on it
 *     [1] CMD_LEN  byte length of that command
 *     [2] REQ_W    bytes ever appended to the request ring (worker-owned, wraps as int32)
 *     [3] REQ_R    bytes ever consumed from it (main-owned); the worker waits on it when full
 *     [4] SLEEPING 1 while the worker sleeps on CMD_SEQ (it polls briefly first): send() notifies
 *                  only then, saving the main thread a futex syscall per command
 *   command area (commandBytes): one JSON command at a time, main -> worker: an invocation when
 *     the worker is idle, the reply {ok}|{err} when it is blocked in a host call. Single slot: the
 *     main thread only writes when the worker is waiting for exactly that.
 *   request ring (requestBytes, a power of two): worker -> main, an SPSC queue of
 *     `[length:int32][UTF-8 JSON, padded to 4 bytes]` records, possibly wrapping. Calls, posts
 *     and the end of `run` all go through it, so the main thread sees them in the guest's order.
 */
export const CHANNEL = {
  headerBytes: 32,
  commandBytes: 4 * 1024 * 1024,
  requestBytes: 4 * 1024 * 1024,
} as const;

const CMD_SEQ = 0;
const CMD_LEN = 1;
const REQ_W = 2;
const REQ_R = 3;
const SLEEPING = 4;

/**
 * For this long after the channel was last used, next() checks the ring once per event-loop turn
 * (setImmediate) instead of sleeping in Atomics.waitAsync, when the worker was awake (polling) as
 * it got the last command. A waitAsync wake-up is a task V8 posts to the main thread's loop:
 * ~35 µs p50 here (bench section 5 measures it), paid for each host call and the end of a run;
 * this took back-to-back warm calls of the Rust example from ~400 to ~165 µs p50. The loop keeps
 * serving other I/O and timers while it checks; what it costs is a busy loop on an otherwise idle
 * main thread for at most SPIN_MS after the worker's last word. Not when the worker slept: it
 * needs a core to wake on, and on 2 cores a spinning main thread delayed that wake by up to a
 * scheduler slice (~1 ms). And not while other processes keep the cores busy (spin-policy.mjs).
 */
const SPIN_MS = 0.5;

/** Atomics.waitAsync is in Node 20 but not in this project's ES2023 lib. */
type WaitAsync = (view: Int32Array, index: number, value: number) => { async: false; value: string } | { async: true; value: Promise<string> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

export function channelBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(CHANNEL.headerBytes + CHANNEL.commandBytes + CHANNEL.requestBytes);
}

export class MainChannel {
  private h: Int32Array;
  private command: Uint8Array;
  private ring: Uint8Array;
  private ring32: Int32Array;
  private read = 0;
  private closed = false;
  /** performance.now() of the last command sent or request read (see SPIN_MS). */
  private active = 0;
  /** Whether the worker was awake (polling) when it got the last command: only then next() spins. */
  private spin = false;
  private encoder = new TextEncoder();
  private decoder = new TextDecoder();

  constructor(sab: SharedArrayBuffer) {
    this.h = new Int32Array(sab, 0, CHANNEL.headerBytes / 4);
    this.command = new Uint8Array(sab, CHANNEL.headerBytes, CHANNEL.commandBytes);
    this.ring = new Uint8Array(sab, CHANNEL.headerBytes + CHANNEL.commandBytes, CHANNEL.requestBytes);
    this.ring32 = new Int32Array(sab, CHANNEL.headerBytes + CHANNEL.commandBytes, CHANNEL.requestBytes / 4);
    this.read = Atomics.load(this.h, REQ_R);
  }

  /** Writes one command and wakes the worker; false when it does not fit the command area. */
  send(message: unknown): boolean {
    const bytes = this.encoder.encode(JSON.stringify(message));
    if (bytes.length > CHANNEL.commandBytes) return false;
    this.command.set(bytes);
    Atomics.store(this.h, CMD_LEN, bytes.length);
    Atomics.add(this.h, CMD_SEQ, 1);
    this.active = performance.now();
    // Only a sleeping worker needs the (syscall) wake; a polling one sees the new CMD_SEQ itself.
    const sleeping = Atomics.load(this.h, SLEEPING) !== 0;
    if (sleeping) Atomics.notify(this.h, CMD_SEQ);
    this.spin = !sleeping;
    return true;
  }

  /**
   * Every request appended since the last call, in order; waits (without blocking) for at least
   * one. Undefined once the channel is closed (the worker is gone).
   */
  async next(): Promise<unknown[] | undefined> {
    // Spin (check once per loop turn) only while the cores are not contended (spin-policy.mjs).
    const spinning = this.spin && spinAllowed();
    for (;;) {
      if (this.closed) return undefined;
      const w = Atomics.load(this.h, REQ_W);
      if (w !== this.read) return this.drain(w);
      if (spinning && performance.now() - this.active < SPIN_MS) {
        await new Promise(setImmediate);
        continue;
      }
      const r = waitAsync(this.h, REQ_W, w);
      if (r.async) await r.value;
    }
  }

  /** Wakes a pending next() for good (the worker is gone); it then resolves undefined. */
  close(): void {
    this.closed = true;
    Atomics.notify(this.h, REQ_W);
  }

  /** Whatever requests are in the ring now, even after close (to collect a dead worker's telemetry). */
  take(): unknown[] {
    const w = Atomics.load(this.h, REQ_W);
    return w === this.read ? [] : this.drain(w);
  }

  private drain(w: number): unknown[] {
    const out: unknown[] = [];
    const size = CHANNEL.requestBytes;
    let r = this.read;
    while (r !== w) {
      const pos = (r >>> 0) & (size - 1);
      const len = this.ring32[pos / 4]!;
      const start = (pos + 4) & (size - 1);
      // slice() copies out of the shared buffer: TextDecoder refuses shared views.
      const bytes = start + len <= size ? this.ring.slice(start, start + len) : concat(this.ring.slice(start), this.ring.slice(0, start + len - size));
      out.push(JSON.parse(this.decoder.decode(bytes)));
      r = (r + 4 + ((len + 3) & ~3)) | 0;
    }
    this.read = r;
    this.active = performance.now();
    Atomics.store(this.h, REQ_R, r);
    Atomics.notify(this.h, REQ_R);
    return out;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
