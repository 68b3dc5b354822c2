// CPU profile of the throughput steady state: 64 sessions (S=…) over one host connection, each
// keeping one call in flight for MS ms (default 3000), after a warm-up. Only that window is
// profiled (node:inspector), so start-up (module loading, scrypt of the host secret) stays out.
//   node --conditions=brain-source --import tsx bench/tools/profile-throughput.mts [out.cpuprofile]
//   J=memory|sqlite-normal|sqlite-full H=raw|sdk
// then: node bench/tools/profile-top.mjs out.cpuprofile
import { Session } from "node:inspector/promises";
import { writeFileSync } from "node:fs";
import { startFixture } from "../src/fixture.ts";
import type { HostKind, JournalKind } from "../src/fixture.ts";

const journal = (process.env.J ?? "memory") as JournalKind;
const host = (process.env.H ?? "raw") as HostKind;
const n = Number(process.env.S ?? 64);
const ms = Number(process.env.MS ?? 3000);
const out = process.argv[2] ?? `/tmp/throughput-${journal}-${host}.cpuprofile`;
const f = await startFixture({ journal, host, sessions: n });
const run = async (window: number) => {
  let done = 0;
  const end = Date.now() + window;
  const t = performance.now();
  await Promise.all(Array.from({ length: n }, async (_, i) => { while (Date.now() < end) { await f.call(i); done++; } }));
  return done / ((performance.now() - t) / 1000);
};
await run(Number(process.env.WARM ?? 500));
const session = new Session();
session.connect();
// ALLOC=1: sample allocations (HeapProfiler) instead of CPU time; top sites by bytes.
const alloc = process.env.ALLOC !== undefined;
if (alloc) await session.post("HeapProfiler.startSampling", { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
else {
  await session.post("Profiler.enable");
  // INTERVAL=µs between samples (V8's default is 1000: too coarse for a call of ~50 µs).
  if (process.env.INTERVAL !== undefined) await session.post("Profiler.setSamplingInterval", { interval: Number(process.env.INTERVAL) });
  await session.post("Profiler.start");
}
const cpu0 = process.cpuUsage();
const rate = await run(ms);
const cpu = process.cpuUsage(cpu0);
if (alloc) {
  const { profile } = await session.post("HeapProfiler.stopSampling");
  const self = new Map<string, number>();
  const walk = (n: typeof profile.head, stack: string) => {
    const cf = n.callFrame;
    const here = `${cf.functionName || "(anon)"} ${cf.url.replace(/.*\/(node_modules|work\/main)\//, "")}:${cf.lineNumber + 1}`;
    self.set(here, (self.get(here) ?? 0) + n.selfSize);
    for (const c of n.children) walk(c, stack);
  };
  walk(profile.head, "");
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const calls = rate * ms / 1000;
  console.log(`allocated ≈ ${(total / calls / 1024).toFixed(1)} KiB/call; top sites (bytes/call):`);
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${(v / calls).toFixed(0).padStart(7)}  ${k}`);
} else {
  const { profile } = await session.post("Profiler.stop");
  writeFileSync(out, JSON.stringify(profile));
}
session.disconnect();
const st = f.internals.store.stats;
console.log(`${journal}/${host}, ${n} sessions: ${Math.round(rate)} calls/s, ${((cpu.user + cpu.system) / (rate * ms / 1000)).toFixed(1)} µs CPU/call; ${(st.records / st.transactions).toFixed(1)} records/transaction overall; profile: ${out}`);
await f.close();
