// A real local HTTP server standing in for a model provider, for the provider tests: it records
// every request and lets each test write the streamed response itself.
import { createServer } from "node:http";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

export function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Rejects with `what` when `p` takes longer than `ms`, so a broken stream fails instead of hanging. */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} (not within ${ms} ms)`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** `p`, or `fallback` when it takes longer than `ms`; the timer is cleared either way, so it never outlives the test. */
export function orAfter<T, F>(p: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout;
  const late = new Promise<F>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** `answer` writes each response; requests are recorded; `closedEarly` resolves when a client drops a response before it ended. `base` is the origin plus `basePath`. */
export async function providerServer(answer: (res: ServerResponse, req: IncomingMessage) => unknown, basePath = "") {
  const received: Received[] = [];
  const closedEarly = deferred();
  const server = createServer(async (req, res) => {
    let raw = "";
    for await (const c of req) raw += c;
    received.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: raw ? JSON.parse(raw) : undefined });
    res.on("close", () => {
      if (!res.writableEnded) closedEarly.resolve();
    });
    await answer(res, req);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${basePath}`;
  const close = () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r())));
  return { base, received, closedEarly: closedEarly.promise, close };
}

export const sse = (res: ServerResponse) => res.writeHead(200, { "content-type": "text/event-stream" });

/** Writes `text` as UTF-8 in `size`-byte pieces with a pause between them: lines, JSON and characters get split. */
export async function trickle(res: ServerResponse, text: string, size = 5) {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) {
    res.write(bytes.subarray(i, i + size));
    await sleep(2);
  }
}
