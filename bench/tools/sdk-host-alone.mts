// The Node SDK host's own work on one call, without network or runtime: a HostConnection on a stub
// socket is fed `committed` (for the previous finish) + `invoke`, as one read delivers them on the
// call path, and answers with `finish`. Per call: wall µs (sequential, frames fed from a setImmediate
// as a socket read is), CPU µs, and from the frames in to the `finish` sent and to the end of that
// tick (when the corked socket would be written: every microtask queued by then has run).   node --import tsx bench/tools/sdk-host-alone.mts   (N=…, PROFILE=out.cpuprofile)
import { Session } from "node:inspector/promises";
import { writeFileSync } from "node:fs";
import { z } from "zod";
import { tool } from "@aexhq/brain";
import { HostConnection } from "../../sdk-core/dist/host/connection.js";

const echo = tool({ name: "echo", description: "Echo the input.", input: z.object({ x: z.number() }), run: async (input, ctx) => ctx.finish(input) });
const spec = echo();
const contract = await spec.tool.contract();
let onSent: (text: string) => void = () => undefined;
const ws = { readyState: 1, send: (t: string) => onSent(t), close() {}, onopen: null as null | ((e: unknown) => void), onmessage: null as null | ((e: { data: unknown }) => void), onclose: null, onerror: null };
const platform = { connectWebSocket: () => ws, env: () => undefined, readFile: async () => new Uint8Array() };
const conn = new HostConnection(platform as never, "ws://stub", () => "token", "host-1", "secret");
onSent = (t) => {
  const f = JSON.parse(t) as { type: string; ref: number };
  if (f.type === "register") queueMicrotask(() => ws.onmessage!({ data: JSON.stringify({ type: "registered", ref: f.ref, hostId: "host-1", digests: [contract.digest], hostTimeoutMs: 30000, leaseMs: 10000 }) }));
};
const registering = conn.register([contract]);
ws.onopen!({});
await registering;
const sessionId = "ses_0123456789abcdef0123";
conn.addSession(sessionId, [spec]);
let lastRef = 0;
let lastCall = "";
let seq = 1;
let done: () => void = () => undefined;
let fedAt = 0;
const toSend: number[] = [];
/** Until the tick ends (all microtasks run): when the SDK's corked socket would be written. */
const toTickEnd: number[] = [];
onSent = (t) => {
  // Cheap, like the raw host: the ref is all we need back.
  const i = t.indexOf('"ref":');
  lastRef = Number(t.slice(i + 6, t.indexOf(",", i)));
  toSend.push(performance.now() - fedAt);
  const at = fedAt;
  process.nextTick(() => {
    toTickEnd.push(performance.now() - at);
    done();
  });
};
const one = () => new Promise<void>((resolve) => {
  done = resolve;
  // Both frames are made before the clock starts: only the SDK's handling is timed.
  const committed = lastRef === 0 ? undefined : `{"type":"committed","ref":${lastRef},"callId":"${lastCall}","sequence":${seq++}}`;
  lastCall = `${sessionId}:${seq}`;
  const invoke = JSON.stringify({ type: "invoke", callId: lastCall, sessionId, sequence: seq++, tool: "echo", digest: contract.digest, input: { x: 1 }, options: {}, deadlineAt: null });
  // Fed from a macrotask, as a socket read is: the SDK's microtasks then run to the end of the tick.
  setImmediate(() => {
    fedAt = performance.now();
    if (committed !== undefined) ws.onmessage!({ data: committed });
    ws.onmessage!({ data: invoke });
  });
});
const N = Number(process.env.N ?? 200000);
for (let i = 0; i < 20000; i++) await one();
const profile = process.env.PROFILE;
const session = new Session();
const alloc = process.env.ALLOC !== undefined;
if (alloc) { session.connect(); await session.post("HeapProfiler.startSampling", { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }); }
if (profile) { session.connect(); await session.post("Profiler.enable"); await session.post("Profiler.setSamplingInterval", { interval: 50 }); await session.post("Profiler.start"); }
toSend.length = 0;
toTickEnd.length = 0;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < N; i++) await one();
const wall = (performance.now() - t0) * 1000 / N;
const cpu = process.cpuUsage(cpu0);
if (alloc) {
  const { profile: hp } = await session.post("HeapProfiler.stopSampling");
  const self = new Map<string, number>();
  const walk = (n: typeof hp.head) => {
    const cf = n.callFrame;
    const here = `${cf.functionName || "(anon)"} ${cf.url.replace(/.*\/(node_modules|wt-sdkhost)\//, "")}:${cf.lineNumber + 1}`;
    self.set(here, (self.get(here) ?? 0) + n.selfSize);
    for (const c of n.children) walk(c);
  };
  walk(hp.head);
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  console.log(`allocated ≈ ${(total / N).toFixed(0)} bytes/call; top sites (bytes/call):`);
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${(v / N).toFixed(0).padStart(7)}  ${k}`);
}
if (profile) { const { profile: p } = await session.post("Profiler.stop"); writeFileSync(profile, JSON.stringify(p)); }
toSend.sort((a, b) => a - b);
toTickEnd.sort((a, b) => a - b);
console.log(`SDK host alone: ${wall.toFixed(2)} µs wall/call, ${((cpu.user + cpu.system) / N).toFixed(2)} µs CPU/call; frames in → finish sent p50 ${(toSend[toSend.length >> 1]! * 1000).toFixed(2)} µs, → end of that tick (the corked write) ${(toTickEnd[toTickEnd.length >> 1]! * 1000).toFixed(2)} µs`);
process.exit(0);
