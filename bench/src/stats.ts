/** Latency samples in nanoseconds → the summary every section prints (microseconds). */
export interface LatencySummary {
  n: number;
  p50us: number;
  p99us: number;
  meanus: number;
}

export function summarize(samplesNs: number[]): LatencySummary {
  const s = Float64Array.from(samplesNs).sort();
  const at = (q: number) => (s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(q * s.length))]! / 1000);
  let sum = 0;
  for (const x of s) sum += x;
  return { n: s.length, p50us: round(at(0.5)), p99us: round(at(0.99)), meanus: round(sum / Math.max(1, s.length) / 1000) };
}

export function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export const now = (): number => Number(process.hrtime.bigint());

/** CPU seconds (user+system) of this process spent since `start`. */
export function cpuSince(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1e6;
}
