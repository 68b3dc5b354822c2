// Two latency series measured in alternating blocks, and two loads' calls/s in alternating rounds,
// so a change in the machine's load during the run (these VMs are shared) lands on the figure and
// its baseline alike instead of on one of them.
import { summarize, now } from "./stats.ts";
import { gc } from "./force-gc.ts";
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

/** Calls/s of two loads measured in alternating rounds (interleavedRate). */
export interface InterleavedRate {
  /** Calls per second over all of a load's rounds (its calls ÷ its seconds). */
  subject: number;
  baseline: number;
  /** Each round's calls/s, in the order measured within each load. */
  subjectRounds: number[];
  baselineRounds: number[];
}

/**
 * Two loads' calls/s, each `concurrency` loops calling until its round ends. Each load gets
 * `totalMs` in all, split into `rounds` rounds, taken in ABBA order (baseline, subject, subject, baseline, …), each after a forced GC. Measured one
 * after the other, a drift of this shared VM's speed (calls/s of the same code moving by a third
 * within a minute) landed on one figure only; alternating puts it on both, and the GC before each
 * round keeps one load's garbage out of the other's rounds.
 */
export async function interleavedRate(
  subject: () => Promise<unknown>,
  baseline: () => Promise<unknown>,
  concurrency: number,
  totalMs: number,
  rounds = 4,
): Promise<InterleavedRate> {
  const calls = { subject: 0, baseline: 0 };
  const seconds = { subject: 0, baseline: 0 };
  const perRound = { subject: [] as number[], baseline: [] as number[] };
  // Unmeasured: the concurrent path's first calls (V8 optimising it, pools filling) ran ~25 % slower.
  await load(baseline, concurrency, totalMs / rounds / 2);
  await load(subject, concurrency, totalMs / rounds / 2);
  for (let r = 0; r < rounds; r++) {
    for (const which of r % 2 === 0 ? (["baseline", "subject"] as const) : (["subject", "baseline"] as const)) {
      gc();
      const { done, s } = await load(which === "subject" ? subject : baseline, concurrency, totalMs / rounds);
      calls[which] += done;
      seconds[which] += s;
      perRound[which].push(done / s);
    }
  }
  return { subject: calls.subject / seconds.subject, baseline: calls.baseline / seconds.baseline, subjectRounds: perRound.subject, baselineRounds: perRound.baseline };
}

async function load(fn: () => Promise<unknown>, concurrency: number, ms: number): Promise<{ done: number; s: number }> {
  let done = 0;
  const end = Date.now() + ms;
  const t = now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < end) {
      await fn();
      done++;
    }
  }));
  return { done, s: (now() - t) / 1e9 };
}
