// Section 6: resident memory per idle session and per connected host, and what deleting returns.
// Measured in a child process of its own (memory-child.ts): in the bench's process the earlier
// sections have already made hundreds of MiB resident, so RSS deltas there were noise (negative,
// or millions of percent returned).
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { AddressInfo } from "node:net";
import { WebSocketServer, WebSocket } from "ws";
import type { PlacedTool } from "@aexhq/brain-protocol";
import { startBrain } from "@aexhq/brain-runtime";
import type { BenchConfig } from "./config.ts";
import { rawHost, createSession, echoContract } from "./fixture.ts";
import { figure } from "./report.ts";
import type { Section } from "./report.ts";
import { round } from "./stats.ts";
import { gc } from "./force-gc.ts";

async function settle(): Promise<{ rss: number; heap: number }> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed + m.external };
}

/** Baseline per host: one bare ws connection (both ends in this process), measured the same way. */
async function bareWsPerConnection(n: number): Promise<number> {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((r) => wss.once("listening", () => r()));
  const port = (wss.address() as AddressInfo).port;
  const before = await settle();
  const clients: WebSocket[] = [];
  for (let i = 0; i < n; i++) {
    const ws = new WebSocket(`ws://127.0.0.1:${port}`);
    await new Promise<void>((r) => ws.once("open", () => r()));
    clients.push(ws);
  }
  const after = await settle();
  for (const c of clients) c.terminate();
  await new Promise<void>((r) => wss.close(() => r()));
  return (after.heap - before.heap) / n;
}

/** Runs measureMemory in a fresh Node process (same loader and conditions as this one). */
export async function memory(cfg: BenchConfig, log: (s: string) => void): Promise<Section> {
  log(`  memory: ${cfg.memorySessions} sessions, ${cfg.memoryHosts} hosts (child process)`);
  const child = fileURLToPath(new URL("./memory-child.ts", import.meta.url));
  const out = execFileSync(process.execPath, [...process.execArgv, child, JSON.stringify(cfg)], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 300_000 });
  return JSON.parse(out) as Section;
}

/** RSS figures only mean something when RSS grew: V8 reuses pages it already holds. */
function rssFigures(s: Section, label: string, grewBytes: number, per: number): void {
  if (grewBytes > 0) s.figures.push(figure(label, round(grewBytes / per / 1024, 2), "KiB"));
  else s.notes.push(`${label}: RSS did not grow (${round(grewBytes / 1024, 0)} KiB): the heap reused pages already resident`);
}

export async function measureMemory(cfg: BenchConfig): Promise<Section> {
  const s: Section = { id: "6", title: `6. Memory (memory journal; JS heap+external after gc, RSS beside it)`, figures: [], notes: [] };
  const brain = await startBrain({ dataDir: ":memory:", port: 0 });
  const hosts: WebSocket[] = [];
  try {
    hosts.push(await rawHost(brain.url, brain.token, "bench-mem"));
    const placed: PlacedTool = { contract: echoContract, options: {}, placement: { kind: "host", hostId: "bench-mem" } };
    const recordBytes = Buffer.byteLength(JSON.stringify({ model: { provider: "scripted", script: [{ text: "done" }] }, tools: [placed] }));
    // Warm up first (fetch/undici, the routes, the session code) so one-time loading is not counted per session.
    for (let i = 0; i < 50; i++) {
      const id = await createSession(brain.url, brain.token, [placed]);
      await fetch(`${brain.url}/v1/sessions/${id}`, { method: "DELETE", headers: { authorization: `Bearer ${brain.token}` } });
    }
    const m0 = await settle();
    const ids: string[] = [];
    for (let i = 0; i < cfg.memorySessions; i++) ids.push(await createSession(brain.url, brain.token, [placed]));
    const m1 = await settle();
    const perSession = (m1.heap - m0.heap) / ids.length;
    s.figures.push(figure(`per idle session (${ids.length} sessions), heap`, round(perSession / 1024, 2), "KiB", { name: "its session.created JSON", value: round(recordBytes / 1024, 2) }));
    rssFigures(s, "per idle session, RSS", m1.rss - m0.rss, ids.length);
    for (const id of ids) await fetch(`${brain.url}/v1/sessions/${id}`, { method: "DELETE", headers: { authorization: `Bearer ${brain.token}` } });
    const m2 = await settle();
    s.figures.push(figure("heap returned after deleting them", round(((m1.heap - m2.heap) / Math.max(1, m1.heap - m0.heap)) * 100, 1), "%"));
    if (m1.rss > m0.rss) s.figures.push(figure("RSS returned after deleting them", round(((m1.rss - m2.rss) / (m1.rss - m0.rss)) * 100, 1), "%"));
    s.figures.push(figure("per deleted session, heap (the memory journal's compacted records)", round((m2.heap - m0.heap) / ids.length / 1024, 2), "KiB", { name: "per idle session", value: round(perSession / 1024, 2) }));
    const held = brain.internals.sessions.held;
    s.notes.push(`after deleting: ${held.resident} sessions resident; nothing of a deleted session stays in the runtime's memory; the memory journal keeps each deleted session's records as one JSON text (SQLite keeps them on disk only)`);
    const h0 = await settle();
    for (let i = 0; i < cfg.memoryHosts; i++) hosts.push(await rawHost(brain.url, brain.token, `bench-mem-${i}`));
    const h1 = await settle();
    const bare = await bareWsPerConnection(cfg.memoryHosts);
    s.figures.push(figure(`per connected host (${cfg.memoryHosts} raw hosts, both ends), heap`, round((h1.heap - h0.heap) / cfg.memoryHosts / 1024, 2), "KiB", { name: "bare ws connection", value: round(bare / 1024, 2) }));
    rssFigures(s, "per connected host, RSS", h1.rss - h0.rss, cfg.memoryHosts);
    s.notes.push("a deleted session is forgotten once session.deleted is committed: SessionManager keeps its final view (what GET and the list answer), the Agentloop, records and budgets go; RSS rarely shrinks in V8, so heap is the figure to read; this section runs in a fresh child process, so its RSS deltas are its own");
  } finally {
    for (const h of hosts) h.terminate();
    await brain.close();
  }
  return s;
}
