// Measures (does not assert) component admission and invocation latency beside a host tool's
// round trip, in one run on one machine. Run from runtime/:
//   node --conditions=brain-source --import tsx test/component-bench.mts [calls]
// Latency per call = from the Environment's start() to the commit of the call's tool.finished
// (performance.now(), µs resolution), measured by wrapping the running server's Environment and
// the session's commit callback. It includes the worker hop, the guest, the host imports (emit + finish,
// each a real journal commit) and for the host tool the WebSocket round trip. It excludes the
// Agentloop and the commit of tool.call_started, which are the same for every kind of tool.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PlacedTool } from "@aexhq/brain-protocol";
import { api, createSession, memoryBrain } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost } from "./helpers/host.ts";
import { components, inspectContract, placedComponent, upload } from "./component-helpers.mts";

const N = Number(process.argv[2] ?? 200);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

function fmt(ms: number): string {
  return ms < 1 ? `${Math.round(ms * 1000)} µs` : ms < 10 ? `${ms.toFixed(2)} ms` : `${ms.toFixed(0)} ms`;
}

/**
 * Records, per call, the time from the Environment's start() to the commit of its tool.finished,
 * by wrapping the running server's Environment and the session's Agentloop commit callback.
 */
async function latencies(brain: Brain, tool: PlacedTool, calls: number): Promise<number[]> {
  const env = brain.internals.environments.get(tool.placement.kind)!;
  const started = new Map<string, number>();
  const out: number[] = [];
  const start = env.start.bind(env);
  env.start = (call, sink) => {
    started.set(call.callId, performance.now());
    return start(call, sink);
  };
  try {
    const steps = Array.from({ length: calls }, () => ({ toolCalls: [{ name: tool.contract.name, input: { path: "/workspace" } }] }));
    const s = await createSession(brain, [tool], [...steps, { text: "done" }]);
    const loop = brain.internals.sessions.loopOf(s.id)!;
    const committed = loop.committed.bind(loop);
    loop.committed = (call, kind, status) => {
      if (kind === "finished") out.push(performance.now() - started.get(call.callId)!);
      committed(call, kind, status);
    };
    const r = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go", wait: true });
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  } finally {
    env.start = start;
  }
  if (out.length !== calls) throw new Error(`expected ${calls} finished calls, measured ${out.length}`);
  return out;
}

const built = await components();
const root = mkdtempSync(join(tmpdir(), "brain-bench-ws-"));
const brain = await memoryBrain({ workspaceRoot: root });
const rows: string[] = [];
try {
  for (const [name, path, grant] of [["rust", built.rust, undefined], ["js", built.js, "read"]] as const) {
    const t0 = performance.now();
    const u = await upload(brain, path);
    const t1 = performance.now();
    const tool = placedComponent(inspectContract(), u.digest, "reader", { depth: 1 }, grant);
    await createSession(brain, [tool], [{ text: "x" }]);
    const t2 = performance.now();
    const lat = await latencies(brain, tool, N + 1);
    const warm = lat.slice(1);
    rows.push(`| ${name} component | ${fmt(t1 - t0)} (server admitMs ${u.body.admitMs}) | ${fmt(t2 - t0)} | ${fmt(lat[0]!)} | ${fmt(pct(warm, 50))} | ${fmt(pct(warm, 99))} |`);
  }
  const c = contract("echo");
  const host = await TestHost.register(brain, [c]);
  const serve = (async () => {
    for (let i = 0; i < N + 1; i++) {
      const inv = await host.invoke(60_000);
      host.fire({ type: "finish", callId: inv.callId, outcome: { status: "ok", value: {} } }).catch(() => {});
    }
  })();
  const lat = await latencies(brain, placed(c, host.hostId), N + 1);
  await serve;
  await host.close();
  const warm = lat.slice(1);
  rows.push(`| host tool (raw WebSocket host) | — | — | ${fmt(lat[0]!)} | ${fmt(pct(warm, 50))} | ${fmt(pct(warm, 99))} |`);
} finally {
  await brain.close();
  rmSync(root, { recursive: true, force: true });
}
console.log(`warm calls per tool: ${N}; node ${process.version}; ${new Date().toISOString()}`);
console.log("| tool | admission (PUT: upload + validate + transpile) | first session ready | first call (cold worker) | warm p50 | warm p99 |");
console.log("| --- | --- | --- | --- | --- | --- |");
for (const r of rows) console.log(r);
