// Section 15 (issue 33): what tracing costs a call. Two runtimes side by side in this process, one
// with tracing off (the default) and one exporting every span over OTLP/HTTP to a receiver in a
// child process (the runtime's own set-up from OTEL_EXPORTER_OTLP_ENDPOINT: Brain's span writer,
// batching, protobuf encoding); the round trip is measured in alternating blocks and the
// 64-session throughput in alternating rounds, so the machine's load falls on both.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Brain } from "@aexhq/brain";
import type { BenchConfig } from "./config.ts";
import { interleavedLatency } from "./interleave.ts";
import { sdkEcho, startFixture } from "./fixture.ts";
import type { Fixture } from "./fixture.ts";
import { figure } from "./report.ts";
import type { Section } from "./report.ts";
import { now, round } from "./stats.ts";
import type { LatencySummary } from "./stats.ts";
import { startBrain } from "@aexhq/brain-runtime";
import { gc } from "./force-gc.ts";
import { pairedRatio, quantile } from "./paired-rounds.ts";

const SINK = fileURLToPath(new URL("./otlp-sink-child.ts", import.meta.url));

interface SinkReport {
  requests: number;
  bytes: number;
  cpuSeconds: number;
}

/**
 * A collector's OTLP/HTTP receiver reduced to what costs the exporter (otlp-sink-child.ts), in a
 * child process: in production the collector runs elsewhere, and its reading ~90 MiB of spans in
 * a full run was charged to "tracing on" while it ran in this process.
 */
async function receiver(): Promise<{ endpoint: string; close(): Promise<SinkReport> }> {
  const child = spawn(process.execPath, [...process.execArgv, SINK], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout! });
  const next = () => new Promise<string>((resolve, reject) => {
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the OTLP receiver exited (${code})`)));
  });
  const { port } = JSON.parse(await next()) as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: async () => {
      const report = next();
      child.stdin!.write("end\n");
      const text = await report;
      child.stdin!.end();
      return JSON.parse(text) as SinkReport;
    },
  };
}

/** Runs `start` with the OTEL_* variables that turn tracing on, restoring the environment after. */
async function traced<T>(endpoint: string, start: () => Promise<T>): Promise<T> {
  const saved = { endpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT, name: process.env.OTEL_SERVICE_NAME };
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
  process.env.OTEL_SERVICE_NAME = "brain-bench";
  try {
    return await start();
  } finally {
    if (saved.endpoint === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    else process.env.OTEL_EXPORTER_OTLP_ENDPOINT = saved.endpoint;
    if (saved.name === undefined) delete process.env.OTEL_SERVICE_NAME;
    else process.env.OTEL_SERVICE_NAME = saved.name;
  }
}

/** Pairs of throughput rounds (tracingCost): each fixture runs once per pair. */
const PAIRS = 12;

/**
 * `concurrency` sessions each keep one call in flight for `ms`; calls per second. The CPU this
 * process spent per call in that time (µs; both runtimes and hosts, the receiver apart) goes to `cpu`.
 */
async function rate(f: Fixture, concurrency: number, ms: number, cpu: number[]): Promise<number> {
  let done = 0;
  const end = Date.now() + ms;
  const cpu0 = process.cpuUsage();
  const t = now();
  await Promise.all(Array.from({ length: concurrency }, async (_, i) => {
    while (Date.now() < end) {
      await f.call(i);
      done++;
    }
  }));
  const elapsed = now() - t;
  const used = process.cpuUsage(cpu0);
  cpu.push((used.user + used.system) / done);
  return done / (elapsed / 1e9);
}

/** A whole turn with one SDK tool call (session.send): the request, turn, model and tool spans all made. */
async function turnRuntime(tracing: string | undefined, iterations: number): Promise<{ send(): Promise<unknown>; close(): Promise<void> }> {
  const start = () => startBrain({ dataDir: ":memory:", port: 0 });
  const brain = tracing === undefined ? await start() : await traced(tracing, start);
  const client = new Brain({ url: brain.url, token: brain.token });
  const script = Array.from({ length: iterations * 2 + 4100 }, () => [{ toolCalls: [{ name: "echo", input: { x: 1 } }] }, { text: "done" }]).flat();
  const session = await client.sessions.create({ model: { provider: "scripted", script }, tools: [sdkEcho()] });
  return { send: () => session.send("go"), close: async () => (await client.close(), await brain.close()) };
}

/** The runtime's brain_spans_lost_total by reason, read from its `/metrics` (operator token). */
async function spansLost(f: Fixture): Promise<{ dropped: number; failed: number }> {
  const res = await fetch(`${f.url}/metrics`, { headers: { authorization: `Bearer ${f.token}` } });
  if (!res.ok) throw new Error(`GET /metrics answered ${res.status}`);
  const text = await res.text();
  const count = (reason: string) => Number(new RegExp(`^brain_spans_lost_total\\{reason="${reason}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? NaN);
  return { dropped: count("dropped"), failed: count("failed") };
}

export async function tracingCost(cfg: BenchConfig, log: (s: string) => void): Promise<Section> {
  const section: Section = { id: "15", title: "15. Tracing: off (the default) against on, exporting every span to an OTLP/HTTP receiver in a child process (Node SDK host, memory journal)", figures: [], notes: [] };
  const sink = await receiver();
  const sessions = Math.max(...cfg.concurrencies);
  log("  tracing: round trip and throughput");
  const off = await startFixture({ journal: "memory", host: "sdk", sessions });
  const on = await traced(sink.endpoint, () => startFixture({ journal: "memory", host: "sdk", sessions }));
  let turns: { on: LatencySummary; off: LatencySummary } | undefined;
  try {
    const { subject, baseline } = await interleavedLatency(() => on.call(0), () => off.call(0), cfg.latencyIterations);
    section.figures.push(figure("host tool round trip, tracing on, p50", subject.p50us, "µs", { name: "tracing off p50", value: baseline.p50us }));
    section.figures.push(figure("host tool round trip, tracing on, p99", subject.p99us, "µs", { name: "tracing off p99", value: baseline.p99us }));
    section.figures.push(figure("cost per call at p50 (on − off)", round(subject.p50us - baseline.p50us, 1), "µs"));
    // Twelve pairs of short rounds, each pair one round off and one on next to each other (off, on,
    // on, off, …), in the time the eight rounds of 1.5 s took before. Those eight ranged 17k–25k
    // calls/s with tracing off within one run: a major collection of the growing journals or
    // another process holding a core moved single rounds by more than tracing costs. A pair's two
    // rounds ran on nearly the same machine, so the ratio is taken within each pair and the figure
    // is the pairs' median, which the few pairs with a disturbance on one side only do not move; the
    // quartiles of the pairs are printed beside it. One forced GC before the rounds, none between
    // them: a full collection taken while no call is in flight frees the maps of the call path's
    // objects, and V8 throws away the optimized code that embeds them (~35–40 functions of the hot
    // path at each, "weak objects"), so every round began by running them unoptimized and compiling
    // them again on a helper thread, which a server under load never does (docs/decisions/bench.md).
    const ms = (cfg.throughputMs * 2) / PAIRS;
    const cpu = { on: [] as number[], off: [] as number[] };
    gc();
    const pr = await pairedRatio(PAIRS, () => undefined, () => rate(on, sessions, ms, cpu.on), () => rate(off, sessions, ms, cpu.off));
    const cost = pr.subject.map((s, i) => (1 / s - 1 / pr.baseline[i]!) * 1e6);
    const cpuCost = cpu.on.map((c, i) => c - cpu.off[i]!);
    const perSOn = quantile(pr.subject, 0.5);
    const perSOff = quantile(pr.baseline, 0.5);
    section.notes.push(`throughput at ${sessions} sessions: ${PAIRS} pairs of rounds of ${round(ms, 0)} ms (off, on, on, off, …; one forced GC before the first); calls/s per round, off: ${pr.baseline.map((r) => round(r, 0)).join(", ")}; on: ${pr.subject.map((r) => round(r, 0)).join(", ")}; on ÷ off per pair: ${pr.ratios.map((r) => round(r, 2)).join(", ")} (quartiles ${round(pr.q1, 3)}–${round(pr.q3, 3)}, the spread of the median figure); CPU on − off per pair, µs a call: ${cpuCost.map((c) => round(c, 1)).join(", ")} (quartiles ${round(quantile(cpuCost, 0.25), 1)}–${round(quantile(cpuCost, 0.75), 1)})`);
    section.figures.push(figure(`throughput, ${sessions} sessions, tracing on (median round)`, round(perSOn, 0), "calls/s", { name: "tracing off", value: round(perSOff, 0) }));
    section.figures.push(figure(`throughput on ÷ off, ${sessions} sessions (median of ${PAIRS} pairs)`, round(pr.median, 3), "×", undefined, { text: `tracing on ≥ 0.85× off at ${sessions} sessions (≤ 15 % cost)`, pass: pr.median >= 0.85 }));
    section.figures.push(figure(`cost per call at ${sessions} sessions (1/on − 1/off, median pair)`, round(quantile(cost, 0.5), 2), "µs"));
    // The same cost as CPU: this process's CPU per call in each round (the receiver's apart), which
    // another process taking a core moves less than it moves the rate.
    section.figures.push(figure(`CPU per call at ${sessions} sessions, tracing on (median round)`, round(quantile(cpu.on, 0.5), 1), "µs", { name: "tracing off", value: round(quantile(cpu.off, 0.5), 1) }));
    section.figures.push(figure(`CPU cost per call at ${sessions} sessions (on − off, median pair)`, round(quantile(cpuCost, 0.5), 2), "µs"));
    // A span dropped (export queue full) or in a failed export is neither encoded nor sent: had
    // any been lost, tracing on would look cheaper than it is, so the count stands beside the ratio.
    const lost = await spansLost(on);
    section.notes.push(`spans the tracing-on runtime did not export by the end of the throughput rounds (brain_spans_lost_total from its /metrics): dropped ${lost.dropped}, failed ${lost.failed}`);
  } finally {
    await on.close();
    await off.close();
  }
  log("  tracing: whole turns");
  const iterations = Math.max(3, Math.floor(cfg.turnIterations / 2));
  const turnOff = await turnRuntime(undefined, iterations);
  const turnOn = await turnRuntime(sink.endpoint, iterations);
  try {
    const { subject, baseline } = await interleavedLatency(() => turnOn.send(), () => turnOff.send(), iterations);
    turns = { on: subject, off: baseline };
    section.figures.push(figure("whole turn with one tool call, tracing on, p50", turns.on.p50us, "µs", { name: "tracing off p50", value: turns.off.p50us }));
  } finally {
    await turnOn.close();
    await turnOff.close();
  }
  const received = await sink.close();
  section.notes.push(`the receiver got ${received.requests} OTLP/HTTP requests (${round(received.bytes / 2 ** 20, 1)} MiB of OTLP protobuf) in a child process of its own, as a collector runs elsewhere: read and answered but not decoded, ${round(received.cpuSeconds, 2)} s of its CPU, not counted in the figures above`);
  section.notes.push("the round trip and throughput start calls as the Agentloop does (Dispatcher.start, no turn), so each call is a trace of its own: one execute_tool span and its commits' (not traced without a turn); the whole turn adds the request, turn and two model-call spans");
  section.notes.push("tracing off creates no span and loads no span writer, so sections 1 and 2 are the off figures; the host has no OpenTelemetry SDK registered (it continues the trace at no cost)");
  return section;
}
