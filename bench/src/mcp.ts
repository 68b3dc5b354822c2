// Section 4: the same trivial tool served by @modelcontextprotocol/sdk, beside ours.
import type { BenchConfig } from "./config.ts";
import { httpPeer, stdioPeer } from "./mcp/peer.ts";
import type { McpPeer } from "./mcp/peer.ts";
import { figure } from "./report.ts";
import type { Section } from "./report.ts";
import { summarize, now, round } from "./stats.ts";
import { callsPerSecond } from "./interleave.ts";

/** One MCP peer's latency (p50, p99 over `iterations` calls) and its calls/s at 64 in flight for `ms`. */
export async function measure(p: McpPeer, iterations: number, ms: number): Promise<{ p50us: number; p99us: number; perS64: number }> {
  for (let i = 0; i < Math.min(100, iterations); i++) await p.call();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t = now();
    await p.call();
    samples.push(now() - t);
  }
  const l = summarize(samples);
  return { p50us: l.p50us, p99us: l.p99us, perS64: await callsPerSecond(() => p.call(), 64, ms) };
}

export async function mcpPeers(cfg: BenchConfig, ours: { p50us: number; p99us: number; perS64: number }, log: (s: string) => void): Promise<Section> {
  const s: Section = { id: "4", title: "4. MCP peer (@modelcontextprotocol/sdk, same echo tool, its own client) vs ours (Node SDK host, memory journal)", figures: [], notes: [] };
  log("  mcp: streamable http");
  const hp = await httpPeer();
  const h = await measure(hp, cfg.mcpIterations, cfg.throughputMs).finally(() => hp.close());
  log("  mcp: stdio");
  const sp = await stdioPeer();
  const io = await measure(sp, cfg.mcpIterations, cfg.throughputMs).finally(() => sp.close());
  s.figures.push(figure("MCP Streamable HTTP p50", h.p50us, "µs"));
  s.figures.push(figure("MCP Streamable HTTP p99", h.p99us, "µs"));
  s.figures.push(figure("MCP Streamable HTTP, 64 concurrent calls", round(h.perS64, 0), "calls/s"));
  s.figures.push(figure("MCP stdio p50", io.p50us, "µs"));
  s.figures.push(figure("MCP stdio p99", io.p99us, "µs"));
  s.figures.push(figure("MCP stdio, 64 concurrent calls", round(io.perS64, 0), "calls/s"));
  s.figures.push(figure("ours p50", ours.p50us, "µs", { name: "MCP HTTP p50", value: h.p50us }, { text: "≤ 1/5 of MCP Streamable HTTP p50", pass: ours.p50us * 5 <= h.p50us }));
  s.figures.push(figure("ours p50 vs stdio", ours.p50us, "µs", { name: "MCP stdio p50", value: io.p50us }));
  s.figures.push(figure("ours, 64 sessions", round(ours.perS64, 0), "calls/s", { name: "MCP HTTP ×64", value: round(h.perS64, 0) }, { text: "≥ 10× MCP Streamable HTTP calls/s at 64", pass: ours.perS64 >= 10 * h.perS64 }));
  s.figures.push(figure("ours, 64 sessions vs stdio", round(ours.perS64, 0), "calls/s", { name: "MCP stdio ×64", value: round(io.perS64, 0) }));
  s.notes.push("MCP Streamable HTTP: stateful session, default SSE-framed responses, server in this process; stdio: server in a child process (node --import tsx). Ours is durable (every call journaled) and MCP's is not.");
  return s;
}
