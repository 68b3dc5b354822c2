// CPU profile of section 17's stdio figure at 64 in flight: the echo tool on the stdio MCP server,
// through Brain (P=brain, default) or by the MCP SDK's Client directly (P=direct). Only the steady
// state is profiled (node:inspector), after a warm-up. Prints calls/s and this process's CPU per call
// (the figure that holds up on a loaded machine), and the server child's CPU per call on Linux.
//   node --import tsx bench/tools/profile-mcp.mts [out.cpuprofile]      (dist/, as the bench measures)
//   P=brain|direct MS=3000 WARM=1000 N=64 PROFILE=0 (no profile, just the figures) ROUNDS=1
//   ALLOC=1: sample allocations instead of CPU time, and print the top sites (bytes a call)
// then: node bench/tools/profile-top.mjs out.cpuprofile
import { Session } from "node:inspector/promises";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { brainPeer, mcpStdioServer } from "../src/mcp-environment.ts";
import { stdioPeer } from "../src/mcp/peer.ts";

const which = process.env.P ?? "brain";
const n = Number(process.env.N ?? 64);
const ms = Number(process.env.MS ?? 3000);
const rounds = Number(process.env.ROUNDS ?? 1);
const profile = process.env.PROFILE !== "0";
const alloc = process.env.ALLOC !== undefined;
const out = process.argv[2] ?? `/tmp/mcp-${which}.cpuprofile`;

/** CPU seconds of this process's children (the server), from /proc; undefined elsewhere. */
function childCpu(): number | undefined {
  try {
    let ticks = 0;
    for (const task of readdirSync("/proc")) {
      if (!/^\d+$/.test(task)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${task}/stat`, "utf8");
      } catch {
        continue;
      }
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(f[1]) !== process.pid) continue;
      ticks += Number(f[11]) + Number(f[12]);
    }
    return ticks / 100;
  } catch {
    return undefined;
  }
}

const peer = which === "direct" ? await stdioPeer() : await brainPeer(mcpStdioServer());
const run = async (window: number) => {
  let done = 0;
  const end = Date.now() + window;
  const t = performance.now();
  await Promise.all(Array.from({ length: n }, async () => {
    while (Date.now() < end) {
      await peer.call();
      done++;
    }
  }));
  return { done, rate: done / ((performance.now() - t) / 1000) };
};
await run(Number(process.env.WARM ?? 1000));
const session = new Session();
if (profile) {
  session.connect();
  if (alloc) await session.post("HeapProfiler.startSampling", { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  else {
    await session.post("Profiler.enable");
    await session.post("Profiler.start");
  }
}
let calls = 0;
for (let r = 0; r < rounds; r++) {
  const cpu0 = process.cpuUsage();
  const child0 = childCpu();
  const { done, rate } = await run(ms);
  calls += done;
  const cpu = process.cpuUsage(cpu0);
  const child1 = childCpu();
  const server = child0 === undefined || child1 === undefined ? "" : `, server ${(((child1 - child0) * 1e6) / done).toFixed(1)} µs CPU/call`;
  console.log(`${which}, ${n} in flight: ${Math.round(rate)} calls/s, ${((cpu.user + cpu.system) / done).toFixed(1)} µs CPU/call here${server}`);
}
if (profile && alloc) {
  const { profile: p } = await session.post("HeapProfiler.stopSampling");
  const self = new Map<string, number>();
  const walk = (node: typeof p.head) => {
    const cf = node.callFrame;
    const here = `${cf.functionName || "(anon)"} ${cf.url.replace(/.*\/(node_modules|wt-[^/]+|work\/main)\//, "")}:${cf.lineNumber + 1}`;
    self.set(here, (self.get(here) ?? 0) + node.selfSize);
    for (const c of node.children) walk(c);
  };
  walk(p.head);
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  console.log(`allocated ≈ ${(total / calls / 1024).toFixed(1)} KiB/call; top sites (bytes/call):`);
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`${(v / calls).toFixed(0).padStart(7)}  ${k}`);
  session.disconnect();
} else if (profile) {
  const { profile: p } = await session.post("Profiler.stop");
  writeFileSync(out, JSON.stringify(p));
  session.disconnect();
  console.log(`profile: ${out}`);
}
await peer.close();
