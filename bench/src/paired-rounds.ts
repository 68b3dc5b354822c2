// Two configurations' throughput compared in many short rounds, alternating, each pair of adjacent
// rounds giving one ratio: on this shared VM the machine's speed moves by more within a few seconds
// (another process takes a core, a major GC lands in a round) than the effect a section measures.

/** The ratios of the pairs, and their median and spread. */
export interface PairedRatio {
  /** subject ÷ baseline per pair, in the order measured. */
  ratios: number[];
  median: number;
  /** The 25th and 75th percentile of the pairs' ratios. */
  q1: number;
  q3: number;
  subject: number[];
  baseline: number[];
}

/** The q-quantile of `xs` (linear between the two nearest ranks). */
export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const at = (s.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return s[lo]! + (s[hi]! - s[lo]!) * (at - lo);
}

/**
 * `pairs` pairs of rounds in the order baseline, subject, subject, baseline, …, `before` run ahead
 * of each round (a forced GC); the ratio of a pair is taken between its two rounds, which ran next
 * to each other and so on nearly the same machine, and the median of the pairs leaves out the few
 * in which a collection or another process fell on one side only.
 */
export async function pairedRatio(pairs: number, before: () => void, subject: () => Promise<number>, baseline: () => Promise<number>): Promise<PairedRatio> {
  const r: PairedRatio = { ratios: [], median: NaN, q1: NaN, q3: NaN, subject: [], baseline: [] };
  for (let p = 0; p < pairs; p++) {
    const order = p % 2 === 0 ? ["baseline", "subject"] as const : ["subject", "baseline"] as const;
    for (const which of order) {
      before();
      r[which].push(await (which === "subject" ? subject() : baseline()));
    }
    r.ratios.push(r.subject[p]! / r.baseline[p]!);
  }
  r.median = quantile(r.ratios, 0.5);
  r.q1 = quantile(r.ratios, 0.25);
  r.q3 = quantile(r.ratios, 0.75);
  return r;
}
