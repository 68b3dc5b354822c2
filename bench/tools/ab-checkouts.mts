// §1's sequential call, old code against new in one process: the bench fixture of two checkouts
// (each with its own built packages, so its own modules), in blocks of N calls alternating A, B, B, A…
// for R pairs; prints each side's median p50 and the median of the per-pair ratios B/A (with
// quartiles) and of CPU per call. Separate runs of one code here differ by ±10 % from one minute to
// the next; pairs of blocks side by side resolve a change of a few percent.
//   B=/path/to/other/checkout [A=this checkout] J=memory|sqlite-normal H=sdk|raw N=2000 R=20 node --import tsx bench/tools/ab-checkouts.mts
// (build both first: `npx turbo run build` in each)
import { fileURLToPath } from "node:url";
import { quantile } from "../src/paired-rounds.ts";
// A: this checkout unless named; B: the other one, always named.
const A = process.env.A ?? fileURLToPath(new URL("../..", import.meta.url));
const B = process.env.B;
if (B === undefined) throw new Error("B=<path of the other checkout> is required (A defaults to this one)");
const journal = process.env.J ?? "memory", host = process.env.H ?? "sdk";
const fa = await (await import(`${A}/bench/src/fixture.ts`)).startFixture({ journal, host, sessions: 1 });
const fb = await (await import(`${B}/bench/src/fixture.ts`)).startFixture({ journal, host, sessions: 1 });
const block = async (f: { call(i: number): Promise<void> }, n: number) => {
  const s: number[] = [];
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) { const t = performance.now(); await f.call(0); s.push(performance.now() - t); }
  const c = process.cpuUsage(c0);
  s.sort((x, y) => x - y);
  return { p50: s[s.length >> 1]! * 1000, cpu: (c.user + c.system) / n };
};
const N = Number(process.env.N ?? 2000), R = Number(process.env.R ?? 20);
for (let i = 0; i < 3; i++) { await block(fa, N); await block(fb, N); }
const ratios: number[] = [], cr: number[] = [], pa: number[] = [], pb: number[] = [];
for (let r = 0; r < R; r++) {
  const first = r % 2 === 0;
  const x = first ? await block(fa, N) : undefined;
  const y = await block(fb, N);
  const a = x ?? await block(fa, N);
  ratios.push(y.p50 / a.p50); cr.push(y.cpu / a.cpu); pa.push(a.p50); pb.push(y.p50);
}
const med = (v: number[]) => quantile(v, 0.5);
console.log(`${journal}/${host}: p50 A ${med(pa).toFixed(1)} µs, B ${med(pb).toFixed(1)} µs; B/A p50 median ${med(ratios).toFixed(3)} (q1 ${quantile(ratios, 0.25).toFixed(3)}, q3 ${quantile(ratios, 0.75).toFixed(3)}); CPU B/A median ${med(cr).toFixed(3)}`);
await fa.close(); await fb.close();
process.exit(0);
