// Baseline for section 5: what crossing to a worker thread and back costs on this machine, with the
// primitives the component channel uses (a SharedArrayBuffer; the worker blocks in Atomics.wait,
// the main thread waits with Atomics.waitAsync, whose wake-up is a task V8 posts to its loop).
// A component call with one emit crosses twice (the invocation and the emit's reply go to the
// worker; the emit and the finish come back), so this round trip is its floor per host call.
import { Worker } from "node:worker_threads";
import { summarize, now } from "./stats.ts";
import type { LatencySummary } from "./stats.ts";

// Plain JavaScript: worker threads do not run the tsx loader. Answers every bump of [0] with a bump of [1].
const WORKER = `
const { workerData } = require("node:worker_threads");
const h = new Int32Array(workerData);
let seen = 0;
for (;;) {
  Atomics.wait(h, 0, seen);
  seen = Atomics.load(h, 0);
  if (seen < 0) break;
  Atomics.add(h, 1, 1);
  Atomics.notify(h, 1);
}`;

type WaitAsync = (view: Int32Array, index: number, value: number) => { async: false; value: string } | { async: true; value: Promise<string> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

/** Main → worker → main round trips, one at a time, as p50/p99. */
export async function threadWakeRoundTrip(iterations: number): Promise<LatencySummary> {
  const sab = new SharedArrayBuffer(8);
  const h = new Int32Array(sab);
  const worker = new Worker(WORKER, { eval: true, workerData: sab });
  await new Promise<void>((resolve, reject) => (worker.once("online", () => resolve()), worker.once("error", reject)));
  const one = async () => {
    const before = Atomics.load(h, 1);
    Atomics.add(h, 0, 1);
    Atomics.notify(h, 0);
    while (Atomics.load(h, 1) === before) {
      const r = waitAsync(h, 1, before);
      if (r.async) await r.value;
    }
  };
  try {
    for (let i = 0; i < Math.min(200, iterations); i++) await one();
    const samples: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const t = now();
      await one();
      samples.push(now() - t);
    }
    return summarize(samples);
  } finally {
    Atomics.store(h, 0, -1);
    Atomics.notify(h, 0);
    await worker.terminate();
  }
}
