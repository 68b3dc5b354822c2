// Section 15's throughput rounds (bench/src/tracing.ts) with what V8 did in each: two fixtures in
// this process, tracing off and on (OTLP/HTTP to the receiver child), the latency calls first as the
// section makes them, then PAIRS pairs of rounds (off, on, on, off, …); per round the calls/s, this
// process's CPU per call split into the main thread and the rest (V8's compiler and GC helpers),
// the heap used at its start and end, the collections in it (count and ms, by kind) and calls per
// loop turn; then the median pair. This is how the forced collections §15 took between rounds were
// found to drop the call path's optimized code (docs/decisions/bench.md).
//   node --import tsx bench/tools/tracing-gc.mts        LAT=5000 PAIRS=12 MS=500 J=memory
//   NOGC=1   no forced GC before each round (§15 since 2026-12-07, late: one before the first only)
//   WARM=ms  untimed calls for that long after each forced GC
//   MODE=pair|swap|offoff|onon|off|on   which runtimes (swap: the traced one started first)
//   PROFILE=1 / ALLOC=1   CPU (100 µs samples) / allocation (every 256 B) profile summed by mode, TOP=n rows
//   BOUNDS=1  print each round's CLOCK_MONOTONIC bounds, for `perf record -k mono` split by round;
//             with --trace-opt --trace-deopt, what is optimized or dropped between and inside rounds
import { PerformanceObserver, constants } from "node:perf_hooks";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { startFixture } from "../src/fixture.ts";
import type { Fixture, JournalKind } from "../src/fixture.ts";
import { gc } from "../src/force-gc.ts";
import { Session } from "node:inspector/promises";
import { readFileSync } from "node:fs";

// PROFILE=1: a CPU profile of every round (100 µs samples), self time per call by function summed by mode, the largest differences printed.
// ALLOC=1: V8's sampling heap profiler instead (every 256 bytes), bytes allocated per call by site, summed by mode.
const PROFILE = process.env.PROFILE !== undefined;
const ALLOC = process.env.ALLOC !== undefined;
const session = new Session();
if (ALLOC) session.connect();
if (PROFILE) { session.connect(); await session.post("Profiler.enable"); await session.post("Profiler.setSamplingInterval", { interval: 100 }); }
const selfUs: Record<string, Map<string, number>> = { on: new Map(), off: new Map() };
const callsOf: Record<string, number> = { on: 0, off: 0 };

const LAT = Number(process.env.LAT ?? 5000);
const PAIRS = Number(process.env.PAIRS ?? 12);
const MS = Number(process.env.MS ?? 500);
const journal = (process.env.J ?? "memory") as JournalKind;
const S = 64;
const SINK = fileURLToPath(new URL("../src/otlp-sink-child.ts", import.meta.url));
const child = spawn(process.execPath, [...process.execArgv.filter((a) => !a.startsWith("--trace") && !a.startsWith("--perf")), SINK], { stdio: ["pipe", "pipe", "inherit"] });
const lines = createInterface({ input: child.stdout! });
const next = () => new Promise<string>((r) => lines.once("line", r));
const { port } = JSON.parse(await next()) as { port: number };

// MODE: "pair" (off and on, as §15), "offoff" / "onon" (two runtimes alike), "off" / "on" (one runtime alone, its rounds in pairs with itself).
const MODE = process.env.MODE ?? "pair";
const traced = async (yes: boolean) => {
  if (yes) process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${port}`;
  process.env.OTEL_SERVICE_NAME = "brain-bench";
  try { return await startFixture({ journal, host: "sdk", sessions: S }); } finally { delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT; }
};
// "swap": off and on as "pair", but the tracing runtime started first.
const swapped = MODE === "swap" ? await traced(true) : undefined;
const off = await traced(MODE === "pair" || MODE === "swap" ? false : MODE.startsWith("on"));
const on = swapped ?? (MODE === "off" || MODE === "on" ? off : await traced(MODE === "pair" ? true : MODE === "onon"));

const gcs: { kind: number; ms: number }[] = [];
new PerformanceObserver((l) => { for (const e of l.getEntries()) gcs.push({ kind: (e as unknown as { detail: { kind: number } }).detail.kind, ms: e.duration }); }).observe({ entryTypes: ["gc"] });
const KIND: Record<number, string> = { [constants.NODE_PERFORMANCE_GC_MINOR]: "minor", [constants.NODE_PERFORMANCE_GC_MAJOR]: "major", [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incr", [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weak" };

for (let i = 0; i < LAT; i++) { await on.call(0); if (on !== off) await off.call(0); }

/** The main thread's CPU time (µs) from /proc: the rest of cpuUsage is V8's helper threads (compiler, GC) and libuv's. */
const mainCpu = () => {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime, in clock ticks of 10 ms.
  return (Number(f[11]) + Number(f[12])) * 1e4;
};
const NOGC = process.env.NOGC !== undefined;
const WARM = Number(process.env.WARM ?? 0);
async function load(f: Fixture, ms: number) {
  const end = Date.now() + ms;
  await Promise.all(Array.from({ length: S }, async (_, i) => { while (Date.now() < end) await f.call(i); }));
}
const mb = (b: number) => (b / 2 ** 20).toFixed(0);
async function round(f: Fixture, name: string) {
  if (!NOGC) gc();
  // WARM=ms: the fixture runs untimed that long after the collection, before the round.
  if (WARM > 0) await load(f, WARM);
  // The observer hears of the forced collection a little later; it is not the round's.
  await new Promise((r) => setTimeout(r, 10));
  gcs.length = 0;
  const h0 = process.memoryUsage().heapUsed;
  let done = 0;
  let turns = 0;
  let counting = true;
  const turn = () => { turns++; if (counting) setImmediate(turn); };
  setImmediate(turn);
  const end = Date.now() + MS;
  if (PROFILE) await session.post("Profiler.start");
  if (ALLOC) await session.post("HeapProfiler.startSampling", { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  if (process.env.BOUNDS !== undefined) console.log("TIMED");
  const m0 = mainCpu();
  const c0 = process.cpuUsage();
  const t = performance.now();
  const ns0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: S }, async (_, i) => { while (Date.now() < end) { await f.call(i); done++; } }));
  const el = performance.now() - t;
  // For perf (`perf record -k mono`): the round's bounds on CLOCK_MONOTONIC, in ns, and its calls.
  if (process.env.BOUNDS !== undefined) console.log(`ROUND ${name} ${ns0} ${process.hrtime.bigint()} ${done}`);
  counting = false;
  const u = process.cpuUsage(c0);
  const mainUs = (mainCpu() - m0) / done;
  if (ALLOC) {
    const { profile } = await session.post("HeapProfiler.stopSampling");
    const m = selfUs[name]!;
    callsOf[name]! += done;
    const walk = (n: typeof profile.head) => {
      const cf = n.callFrame;
      const key = `${cf.functionName || "(anon)"} ${cf.url.replace(/.*\/(node_modules|wt-sdkhost)\//, "")}:${cf.lineNumber + 1}`;
      m.set(key, (m.get(key) ?? 0) + n.selfSize);
      for (const c of n.children) walk(c);
    };
    walk(profile.head);
  }
  if (PROFILE) {
    const { profile } = await session.post("Profiler.stop");
    const m = selfUs[name]!;
    callsOf[name]! += done;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const dt = profile.timeDeltas!;
    for (let k = 0; k < profile.samples!.length; k++) {
      const n = byId.get(profile.samples![k]!)!;
      const cf = n.callFrame;
      const key = `${cf.functionName || "(anon)"} ${cf.url.replace(/.*\/(node_modules|wt-sdkhost)\//, "")}:${cf.lineNumber + 1}`;
      m.set(key, (m.get(key) ?? 0) + (dt[k + 1] ?? 0));
    }
  }
  const h1 = process.memoryUsage().heapUsed;
  await new Promise((r) => setTimeout(r, 20));
  const by: Record<string, { n: number; ms: number }> = {};
  for (const g of gcs) { const k = KIND[g.kind] ?? String(g.kind); (by[k] ??= { n: 0, ms: 0 }).n++; by[k].ms += g.ms; }
  const rate = done / (el / 1000);
  const cpu = (u.user + u.system) / done;
  const gcText = Object.entries(by).map(([k, v]) => `${k} ${v.n}/${v.ms.toFixed(0)}ms`).join(" ");
  console.log(`${name.padEnd(3)} ${rate.toFixed(0).padStart(6)}/s cpu ${cpu.toFixed(1).padStart(5)} µs (main ${mainUs.toFixed(1)}, others ${(cpu - mainUs).toFixed(1)}) heap ${mb(h0)}→${mb(h1)} MiB  gc ${gcText}  calls/loop turn ${(done / turns).toFixed(1)}  gc µs/call ${(Object.values(by).reduce((a, v) => a + v.ms, 0) * 1000 / done).toFixed(1)}`);
  return { rate, cpu };
}
const ratios: number[] = [];
const dcpu: number[] = [];
for (let p = 0; p < PAIRS; p++) {
  const order = p % 2 === 0 ? [["off", off], ["on", on]] as const : [["on", on], ["off", off]] as const;
  const r: Record<string, { rate: number; cpu: number }> = {};
  for (const [n, f] of order) r[n] = await round(f, n);
  ratios.push(r.on!.rate / r.off!.rate);
  dcpu.push(r.on!.cpu - r.off!.cpu);
  console.log(`  pair ${p}: on/off ${(r.on!.rate / r.off!.rate).toFixed(2)}  cpu on−off ${(r.on!.cpu - r.off!.cpu).toFixed(1)} µs`);
}
const med = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); const m = (s.length - 1) / 2; return (s[Math.floor(m)]! + s[Math.ceil(m)]!) / 2; };
console.log(`median on/off ${med(ratios).toFixed(3)}  cpu on−off ${med(dcpu).toFixed(1)} µs; first 4 pairs ${med(dcpu.slice(0, 4)).toFixed(1)}, last 4 ${med(dcpu.slice(-4)).toFixed(1)}`);
if (PROFILE || ALLOC) {
  const keys = new Set([...selfUs.on!.keys(), ...selfUs.off!.keys()]);
  const per = (mode: string, k: string) => (selfUs[mode]!.get(k) ?? 0) / callsOf[mode]!;
  const rows = [...keys].map((k) => [k, per("on", k), per("off", k)] as const).sort((a, b) => Math.abs(b[1] - b[2]) - Math.abs(a[1] - a[2]));
  const tot = (mode: string) => [...selfUs[mode]!.values()].reduce((a, b) => a + b, 0) / callsOf[mode]!;
  console.log(ALLOC ? `bytes/call: on ${tot("on").toFixed(0)} off ${tot("off").toFixed(0)}; largest differences (bytes/call on, off, on−off):` : `sampled wall µs/call: on ${tot("on").toFixed(1)} off ${tot("off").toFixed(1)}; largest differences (µs/call on, off, on−off):`);
  for (const [k, a, b] of rows.slice(0, Number(process.env.TOP ?? 45))) console.log(ALLOC ? `${a.toFixed(0).padStart(7)} ${b.toFixed(0).padStart(7)} ${(a - b).toFixed(0).padStart(7)}  ${k}` : `${a.toFixed(2).padStart(7)} ${b.toFixed(2).padStart(7)} ${(a - b).toFixed(2).padStart(7)}  ${k}`);
}
await on.close();
if (on !== off) await off.close();
child.stdin!.write("end\n");
await next();
child.stdin!.end();
process.exit(0);
