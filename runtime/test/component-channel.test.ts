// The SharedArrayBuffer channel between the runtime and a component worker, with a real worker
// thread running the worker side (channel-worker.mjs): requests arrive whether the main thread is
// checking every loop turn (worker awake) or sleeping in Atomics.waitAsync, and close() ends a
// pending next() in both.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Worker } from "node:worker_threads";
import { CHANNEL, MainChannel, channelBuffer } from "../src/environments/component/channel.ts";

const CHANNEL_WORKER = new URL("../src/environments/component/channel-worker.mjs", import.meta.url).href;

// Echoes each command back as a request after `delayMs` of busy work (the guest's), then waits for the next.
const WORKER = `
const { workerData, parentPort } = require("node:worker_threads");
import(workerData.url).then(async ({ workerChannel }) => {
  const ch = workerChannel(workerData.sab, workerData.sizes);
  parentPort.postMessage("ready");
  parentPort.on("message", () => {}); // a pending waitAsync does not keep a thread alive (as in worker.mjs)
  for (;;) {
    const m = await ch.receiveAsync();
    if (m.stop) break;
    const until = performance.now() + m.delayMs;
    while (performance.now() < until);
    ch.request({ echo: m.n });
  }
});`;

async function withWorker(fn: (ch: MainChannel) => Promise<void>): Promise<void> {
  const sab = channelBuffer();
  // No inherited tsx loader (execArgv: []), like the pool's workers: channel-worker.mjs is plain JS.
  const worker = new Worker(WORKER, { eval: true, execArgv: [], workerData: { sab, sizes: CHANNEL, url: CHANNEL_WORKER } });
  // Like the pool: commands only after the worker's side of the channel exists.
  await new Promise<void>((resolve, reject) => (worker.once("message", () => resolve()), worker.once("error", reject)));
  const ch = new MainChannel(sab);
  try {
    await fn(ch);
  } finally {
    ch.send({ stop: true });
    await worker.terminate();
  }
}

test("requests arrive back to back (worker awake, main checking every turn) and after idle (both asleep)", async () => {
  await withWorker(async (ch) => {
    for (let n = 0; n < 200; n++) {
      assert.ok(ch.send({ n, delayMs: 0 }));
      assert.equal(await ch.next(), [{ echo: n }]);
    }
    // Long enough for the worker to sleep in the kernel and the main thread to leave its check loop.
    for (let n = 0; n < 5; n++) {
      await new Promise((r) => setTimeout(r, 5));
      assert.ok(ch.send({ n, delayMs: 0 }));
      assert.equal(await ch.next(), [{ echo: n }]);
    }
    // A guest that works longer than the check window: the main thread falls back to waitAsync and is woken.
    assert.ok(ch.send({ n: 7, delayMs: 3 }));
    assert.equal(await ch.next(), [{ echo: 7 }]);
  });
});

test("close() ends a pending next(), while checking and while asleep", async () => {
  await withWorker(async (ch) => {
    ch.send({ n: 1, delayMs: 0 });
    assert.equal(await ch.next(), [{ echo: 1 }]);
    const checking = ch.next();
    ch.close();
    assert.is(await checking, undefined);
  });
  await withWorker(async (ch) => {
    ch.send({ n: 1, delayMs: 0 });
    assert.equal(await ch.next(), [{ echo: 1 }]);
    const asleep = ch.next();
    await new Promise((r) => setTimeout(r, 5));
    ch.close();
    assert.is(await asleep, undefined);
  });
});

test.run();
