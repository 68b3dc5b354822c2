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
await session.post("Profiler.enable");
await session.post("Profiler.start");
const rate = await run(ms);
const { profile } = await session.post("Profiler.stop");
writeFileSync(out, JSON.stringify(profile));
session.disconnect();
const st = f.internals.store.stats;
console.log(`${journal}/${host}, ${n} sessions: ${Math.round(rate)} calls/s; ${(st.records / st.transactions).toFixed(1)} records/transaction overall; profile: ${out}`);
await f.close();
