// Two latency series measured in alternating blocks, so a change in the machine's load during the
// run (these VMs are shared) lands on the figure and its baseline alike instead of on one of them
// (throughput pairs: paired-rounds.ts).
import { summarize, now } from "./stats.ts";
import type { LatencySummary } from "./stats.ts";

const BLOCKS = 10;

export async function interleavedLatency(
  subject: () => Promise<unknown>,
  baseline: () => Promise<unknown>,
  iterations: number,
): Promise<{ subject: LatencySummary; baseline: LatencySummary }> {
  // V8 keeps optimising the call path for the first thousand or so calls; fewer left quick runs ~40 % slower.
  const warm = Math.min(2000, iterations);
  for (let i = 0; i < warm; i++) await subject(), await baseline();
  const s: number[] = [];
  const b: number[] = [];
  const perBlock = Math.max(1, Math.ceil(iterations / BLOCKS));
  for (let done = 0; done < iterations; done += perBlock) {
    const n = Math.min(perBlock, iterations - done);
    await sample(baseline, n, b);
    await sample(subject, n, s);
  }
  return { subject: summarize(s), baseline: summarize(b) };
}

async function sample(fn: () => Promise<unknown>, n: number, into: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t = now();
    await fn();
    into.push(now() - t);
  }
}


/** Calls/s of `call` with `concurrency` loops each keeping one call in flight for `ms`. */
export async function callsPerSecond(call: () => Promise<unknown>, concurrency: number, ms: number): Promise<number> {
  let done = 0;
  const end = Date.now() + ms;
  const t = now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < end) {
      await call();
      done++;
    }
  }));
  return done / ((now() - t) / 1e9);
}
