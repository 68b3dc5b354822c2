// Sequential round trips (one session, §1's path) for MS ms after a warm-up, without a profiler, so
// `perf record -p` or `strace -p` can attach after "MARK start" (stderr). Prints p50/p99, CPU per call
// (user, system) and the group commits' durations by size (the store's own observer, wrapped).
//   J=memory|sqlite-normal H=raw|sdk MS=5000 node --import tsx bench/tools/loop-seq.mts
import { startFixture } from "../src/fixture.ts";
import type { HostKind, JournalKind } from "../src/fixture.ts";
const journal = (process.env.J ?? "sqlite-normal") as JournalKind;
const host = (process.env.H ?? "sdk") as HostKind;
const ms = Number(process.env.MS ?? 5000);
const f = await startFixture({ journal, host, sessions: 1 });
// Diagnostics of the SQLite store's share (never what the runtime runs): X=noop keeps the store's
// own JavaScript but writes nothing; X=exclusive takes SQLite's exclusive locking mode (no lock
// calls per transaction; the checkpoint thread is shut out).
const sqlite = f.internals.store as unknown as { write?: (...a: unknown[]) => void; db?: { pragma(s: string): unknown } };
if (process.env.X === "noop") sqlite.write = () => undefined;
if (process.env.X === "exclusive") sqlite.db!.pragma("locking_mode = EXCLUSIVE");
const run = async (window: number) => {
  let done = 0;
  const samples: number[] = [];
  const end = Date.now() + window;
  while (Date.now() < end) { const t = performance.now(); await f.call(0); samples.push(performance.now() - t); done++; }
  samples.sort((a, b) => a - b);
  return { done, p50: samples[samples.length >> 1]! * 1000, p99: samples[Math.floor(samples.length * 0.99)]! * 1000, p999: samples[Math.floor(samples.length * 0.999)]! * 1000 };
};
await run(Number(process.env.WARM ?? 1500));
// Commit durations by size, through the store's own observer hook (wrapped).
const store = f.internals.store as unknown as { observer?: (r: readonly unknown[], s: number, sec: number, e?: unknown) => void };
const inner = store.observer;
const bySize = new Map<number, number[]>();
store.observer = (r, s, sec, e) => { let a = bySize.get(r.length); if (!a) bySize.set(r.length, (a = [])); a.push(sec * 1e6); inner?.(r, s, sec, e); };
console.error(`MARK start pid ${process.pid}`);
const cpu0 = process.cpuUsage();
const r = await run(ms);
const cpu = process.cpuUsage(cpu0);
console.error(`MARK end`);
const st = f.internals.store.stats;
console.log(`${journal}/${host}: ${r.done} calls, p50 ${r.p50.toFixed(1)} µs, p99 ${r.p99.toFixed(0)}, p99.9 ${r.p999.toFixed(0)}, ${((cpu.user + cpu.system) / r.done).toFixed(1)} µs CPU/call (user ${(cpu.user / r.done).toFixed(1)}, sys ${(cpu.system / r.done).toFixed(1)}); ${st.transactions} tx`);
for (const [n, a] of [...bySize].sort((x, y) => x[0] - y[0])) { a.sort((x, y) => x - y); console.log(`  commits of ${n}: ${a.length}, p50 ${a[a.length >> 1]!.toFixed(1)} µs, p90 ${a[Math.floor(a.length * 0.9)]!.toFixed(1)}`); }
await f.close();
