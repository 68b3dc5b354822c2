// Baseline: a raw WebSocket echo on loopback, server and client in this process, the same layout
// as the runtime and its host in the round-trip sections.
import { WebSocketServer, WebSocket } from "ws";
import type { AddressInfo } from "node:net";
import { summarize, now } from "./stats.ts";
import type { LatencySummary } from "./stats.ts";

export interface EchoPair {
  /** One round trip of `payload`, resolving when the echo arrives. */
  roundTrip(payload: string): Promise<void>;
  close(): Promise<void>;
}

export async function echoPair(): Promise<EchoPair> {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((r) => wss.once("listening", () => r()));
  wss.on("connection", (ws) => ws.on("message", (m) => ws.send(String(m))));
  const port = (wss.address() as AddressInfo).port;
  const ws = new WebSocket(`ws://127.0.0.1:${port}`);
  await new Promise<void>((r, j) => (ws.once("open", () => r()), ws.once("error", j)));
  // Echoes come back in order on one connection, so a FIFO of waiters matches them.
  const waiters: Array<() => void> = [];
  let head = 0;
  ws.on("message", () => waiters[head++]!());
  return {
    roundTrip(payload) {
      return new Promise<void>((resolve) => {
        waiters.push(resolve);
        ws.send(payload);
        if (head > 4096) waiters.splice(0, head), (head = 0);
      });
    },
    async close() {
      ws.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
    },
  };
}

/** Sequential round trips: the latency baseline. */
export async function echoLatency(payload: string, iterations: number): Promise<LatencySummary> {
  const pair = await echoPair();
  try {
    for (let i = 0; i < Math.min(200, iterations); i++) await pair.roundTrip(payload);
    const samples: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const t = now();
      await pair.roundTrip(payload);
      samples.push(now() - t);
    }
    return summarize(samples);
  } finally {
    await pair.close();
  }
}

/** `concurrency` echoes kept in flight over one connection for `ms`: the throughput baseline (per s). */
export async function echoThroughput(payload: string, concurrency: number, ms: number): Promise<number> {
  const pair = await echoPair();
  try {
    let done = 0;
    const end = Date.now() + ms;
    const t = now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (Date.now() < end) {
          await pair.roundTrip(payload);
          done++;
        }
      }),
    );
    return done / ((now() - t) / 1e9);
  } finally {
    await pair.close();
  }
}
