// Section 17: MCP servers as an Environment (issue 29). The same echo tool on the same kind of MCP
// server (bench/src/mcp/echo-server.ts), called directly by the MCP SDK's Client and through Brain
// (each call journaled: tool.call_started, tool.result, tool.finished in the memory journal), over
// stdio (a child process each) and over Streamable HTTP (a server in this process each).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { PlacedTool } from "@aexhq/brain-protocol";
import { startBrain } from "@aexhq/brain-runtime";
import type { BenchConfig } from "./config.ts";
import { httpPeer, stdioPeer } from "./mcp/peer.ts";
import { callsPerSecond, interleavedLatency } from "./interleave.ts";
import { pairedRatio, quantile } from "./paired-rounds.ts";
import type { PairedRatio } from "./paired-rounds.ts";
import { gc } from "./force-gc.ts";
import type { McpPeer } from "./mcp/peer.ts";
import { mcpEchoServer } from "./mcp/echo-server.ts";
import { createSession } from "./fixture.ts";
import { figure } from "./report.ts";
import type { Section } from "./report.ts";
import { round } from "./stats.ts";

const CONCURRENCY = 64;
/** Pairs of throughput rounds (direct, Brain, Brain, direct, …): each side runs `throughputMs` in all. */
const PAIRS = 6;

/** An echo server over Streamable HTTP for one client (the SDK's stateful transport serves one session). */
async function httpEchoServer(): Promise<{ url: string; close(): Promise<void> }> {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  await mcpEchoServer().connect(transport);
  const http = createServer((req, res) => void transport.handleRequest(req, res));
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    async close() {
      await transport.close();
      await new Promise<void>((r) => {
        http.close(() => r());
        http.closeAllConnections();
      });
    },
  };
}

/** The stdio echo server as an operator defines it: the same child process the direct peer starts. */
export function mcpStdioServer(): { command: string; args: string[] } {
  return { command: process.execPath, args: ["--import", "tsx", fileURLToPath(new URL("./mcp/stdio-server.ts", import.meta.url))] };
}

/** Brain as an MCP peer, with its journal's group commits so far and the records they held. */
export interface BrainMcpPeer extends McpPeer {
  commits(): { transactions: number; records: number };
}

/**
 * Calls of the echo tool through Brain: `sessions` sessions placing it from `server`, each call
 * started as the Agentloop starts one. `start` is another build's startBrain (bench/tools/ab-mcp.mts).
 */
export async function brainPeer(server: { command: string; args: string[] } | { url: string }, opts: { start?: typeof startBrain; sessions?: number } = {}): Promise<BrainMcpPeer> {
  const n = opts.sessions ?? CONCURRENCY;
  const brain = await (opts.start ?? startBrain)({ dataDir: ":memory:", port: 0, maxEmittedBytes: 2 ** 40, mcpServers: { echo: server } });
  const { internals } = brain;
  const listed = (await (await fetch(`${brain.url}/v1/mcp-servers/echo/tools`, { headers: { authorization: `Bearer ${brain.token}` } })).json()) as { tools: { tool: string; contract: PlacedTool["contract"] }[] };
  const placed: PlacedTool = { contract: listed.tools.find((t) => t.tool === "echo")!.contract, options: {}, placement: { kind: "mcp", server: "echo", tool: "echo" } };
  const sessions = await Promise.all(Array.from({ length: n }, () => createSession(brain.url, brain.token, [placed]).then((id) => internals.sessions.state(id))));
  const waiters = new Map<string, (status: string) => void>();
  for (const s of sessions) {
    s.onCommit((r) => {
      if (r.type !== "tool.finished") return;
      const w = waiters.get(r.data.callId);
      if (w) waiters.delete(r.data.callId), w(r.data.status);
    });
  }
  let next = 0;
  return {
    call() {
      // Round robin over the sessions: a session's calls share its activation 0 (no model turn).
      const s = sessions[next++ % n]!;
      return new Promise<void>((resolve, reject) => {
        const [c] = internals.dispatcher.start(s, 0, [{ modelCallId: "bench", tool: s.created.tools[0]!, input: { x: 1 }, deadlineAt: null }], internals.sessions.loopOf(s.id)!);
        waiters.set(c!.callId, (status) => (status === "ok" ? resolve() : reject(new Error(`echo through Brain ended ${status}`))));
      });
    },
    commits: () => ({ transactions: internals.store.stats.transactions, records: internals.store.stats.records }),
    close: () => brain.close(),
  };
}


export async function mcpEnvironment(cfg: BenchConfig, log: (s: string) => void): Promise<Section> {
  const s: Section = { id: "17", title: "17. MCP servers as an Environment: the same MCP echo server called by the MCP SDK's Client directly vs through Brain (memory journal)", figures: [], notes: [] };
  const stdioServer = mcpStdioServer();
  for (const transport of ["stdio", "Streamable HTTP"] as const) {
    log(`  mcp environment: ${transport}, direct and through Brain, alternating`);
    // Both peers are open at once and measured in alternation (latency in blocks, calls/s in
    // adjacent pairs of rounds, as §15): measured one after the other, the stdio ratio at 64 in
    // flight moved 0.72–0.97× between runs of the same code with the VM's speed.
    const direct = transport === "stdio" ? await stdioPeer() : await httpPeer();
    const http = transport === "stdio" ? undefined : await httpEchoServer();
    const through = await brainPeer(http === undefined ? stdioServer : { url: http.url });
    let latency: Awaited<ReturnType<typeof interleavedLatency>>;
    let rate: PairedRatio;
    const ms = cfg.throughputMs / PAIRS;
    try {
      latency = await interleavedLatency(() => through.call(), () => direct.call(), cfg.mcpIterations);
      // Unmeasured: the concurrent path's first calls (V8 optimising it, pools filling) ran ~25 % slower.
      await callsPerSecond(() => direct.call(), CONCURRENCY, ms / 2);
      await callsPerSecond(() => through.call(), CONCURRENCY, ms / 2);
      // One forced GC before the rounds, none between them, as §15 (bench/src/tracing.ts): a full
      // collection while no call is in flight makes V8 drop the optimized code of the call path,
      // so each round began by compiling it again, which a client under load never does; the side
      // with more JavaScript a call (Brain's) paid more of it (docs/decisions/bench.md).
      gc();
      rate = await pairedRatio(PAIRS, () => undefined, () => callsPerSecond(() => through.call(), CONCURRENCY, ms), () => callsPerSecond(() => direct.call(), CONCURRENCY, ms));
    } finally {
      await direct.close();
      await through.close();
      await http?.close();
    }
    const d = latency.baseline;
    const b = latency.subject;
    s.figures.push(figure(`${transport}: direct Client p50`, d.p50us, "µs"));
    s.figures.push(figure(`${transport}: through Brain p50`, b.p50us, "µs", { name: "direct p50", value: d.p50us }, { text: "≤ 1.5× the direct Client's p50", pass: b.p50us <= 1.5 * d.p50us }));
    s.figures.push(figure(`${transport}: through Brain p99`, b.p99us, "µs", { name: "direct p99", value: d.p99us }));
    s.figures.push(figure(`${transport}: through Brain, ${CONCURRENCY} concurrent calls (median round)`, round(quantile(rate.subject, 0.5), 0), "calls/s", { name: `direct ×${CONCURRENCY}`, value: round(quantile(rate.baseline, 0.5), 0) }));
    s.figures.push(figure(`${transport}: through Brain ÷ direct, ${CONCURRENCY} concurrent calls (median of ${PAIRS} pairs)`, round(rate.median, 3), "×", undefined, { text: "≥ 0.8× the direct Client's calls/s", pass: rate.median >= 0.8 }));
    s.notes.push(`${transport} at ${CONCURRENCY} in flight: ${PAIRS} pairs of rounds of ${round(ms, 0)} ms (direct, Brain, Brain, direct, …; a forced GC before each; half a round of each unmeasured first); calls/s per round, direct: ${rate.baseline.map((r) => round(r, 0)).join(", ")}; through Brain: ${rate.subject.map((r) => round(r, 0)).join(", ")}; Brain ÷ direct per pair: ${rate.ratios.map((r) => round(r, 2)).join(", ")} (quartiles ${round(rate.q1, 3)}–${round(rate.q3, 3)})`);
  }
  s.notes.push(
    `Through Brain: ${CONCURRENCY} sessions placing the server's echo tool, calls started by the dispatcher as the Agentloop starts them (no model turn), each journaled (memory journal) and answered from its tool.finished commit. Direct: one MCP SDK Client. Each side has its own server (a child process for stdio, a server in this process for Streamable HTTP); Brain's client is the SDK's Client for the MCP session (initialize, tools/list) and its own JSON-RPC for tools/call on the same transport (runtime/src/environments/mcp/wire.ts); the direct side is the plain SDK Client throughout.`,
  );
  return s;
}
