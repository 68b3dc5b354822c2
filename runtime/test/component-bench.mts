// Measures (does not assert) component admission and invocation latency beside a host tool's
// round trip, in one run on one machine. Run from runtime/:
//   node --conditions=brain-source --import tsx test/component-bench.mts [calls]
// Latency per call = tool.finished.at - tool.call_started.at from the journal (ms resolution),
// so it includes the commit of tool.call_started, dispatch, the guest and the finish commit.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JournalRecord, PlacedTool } from "@aexhq/brain-protocol";
import { api, createSession, memoryBrain, ofType, records } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost } from "./helpers/host.ts";
import { components, inspectContract, placedComponent, upload } from "./component-helpers.mts";

const N = Number(process.argv[2] ?? 60);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

async function latencies(brain: Brain, tool: PlacedTool): Promise<number[]> {
  const steps = Array.from({ length: N }, () => ({ toolCalls: [{ name: tool.contract.name, input: { path: "/workspace" } }] }));
  const s = await createSession(brain, [tool], [...steps, { text: "done" }]);
  const r = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go", wait: true });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  const all: JournalRecord[] = await records(brain, s.id);
  const started = new Map(ofType(all, "tool.call_started").map((x) => [x.data.callId, x.at]));
  const fins = ofType(all, "tool.finished");
  const bad = fins.filter((f) => f.data.status !== "ok");
  if (bad.length) throw new Error(`calls failed: ${JSON.stringify(bad[0])}`);
  return fins.map((f) => f.at - started.get(f.data.callId)!);
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
    const lat = await latencies(brain, tool);
    const warm = lat.slice(1);
    rows.push(`| ${name} component | ${(t1 - t0).toFixed(0)} ms (server admitMs ${u.body.admitMs}) | ${(t2 - t0).toFixed(0)} ms | ${lat[0]} ms | ${pct(warm, 50)} ms | ${pct(warm, 99)} ms |`);
  }
  const c = contract("echo");
  const host = await TestHost.register(brain, [c]);
  let running = true;
  void (async () => {
    while (running) {
      const inv = await host.invoke(60_000).catch(() => undefined);
      if (!inv) break;
      host.fire({ type: "finish", callId: inv.callId, outcome: { status: "ok", value: {} } }).catch(() => {});
    }
  })();
  const lat = await latencies(brain, placed(c, host.hostId));
  running = false;
  await host.close();
  rows.push(`| host tool (raw WebSocket host) | — | — | ${lat[0]} ms | ${pct(lat.slice(1), 50)} ms | ${pct(lat.slice(1), 99)} ms |`);
} finally {
  await brain.close();
  rmSync(root, { recursive: true, force: true });
}
console.log(`calls per tool: ${N}; node ${process.version}; ${new Date().toISOString()}`);
console.log("| tool | admission (PUT: upload + validate + transpile) | first session ready | first call (cold worker) | warm p50 | warm p99 |");
console.log("| --- | --- | --- | --- | --- | --- |");
for (const r of rows) console.log(r);
