// Entry of the child process bench section 16 runs the noisy tenant in (tenant-limits.ts): workers
// sending the requests one API key at its limits keeps making (new sessions, messages to a session
// at its journal-bytes limit, SSE streams, listings) at `perSecond` in all, each worker on its own
// schedule (a request late because the last answer came late goes at once), while "go" on stdin is
// in force; "stop" pauses them. Prints "ready", one "ok" per command once the workers
// obeyed it, and at "end" one JSON line: answers by status and limit.
import { createInterface } from "node:readline";
import { Agent, request } from "node:http";

const { url, token, sessionId, fullSessionId, workers, perSecond } = JSON.parse(process.argv[process.argv.length - 1]!) as { url: string; token: string; sessionId: string; fullSessionId: string; workers: number; perSecond: number };
/** Each worker's interval between requests. */
const gapMs = (1000 * workers) / perSecond;
const counts: Record<string, number> = {};
let running = false;
let ending = false;
let wake: Array<() => void> = [];
let busy = 0;

/**
 * node:http with kept-alive sockets rather than fetch: a lighter client, so what the noisy tenant
 * costs this machine is mostly what the server spends answering it (the two share the cores).
 */
const agent = new Agent({ keepAlive: true, maxSockets: workers });

function send(method: string, path: string, body?: unknown, accept?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(url + path, { method, agent, headers: { authorization: `Bearer ${token}`, ...(payload === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }), ...(accept ? { accept } : {}) } }, (res) => {
      let text = "";
      // A stream that was admitted (not expected: the key holds its streams) is not read to its end.
      if (res.statusCode === 200 && accept !== undefined) {
        res.destroy();
        return resolve({ status: 200, text: "" });
      }
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(payload);
  });
}

/** One noisy request, counted by its status and, for a 429, the limit it names. */
async function once(i: number): Promise<void> {
  let res: { status: number; text: string };
  switch (i % 4) {
    case 0:
      res = await send("POST", "/v1/sessions", { model: { provider: "scripted", script: [] }, tools: [] });
      break;
    case 1:
      res = await send("POST", `/v1/sessions/${fullSessionId}/messages`, { text: "more" });
      break;
    case 2:
      res = await send("GET", `/v1/sessions/${sessionId}/events`, undefined, "text/event-stream");
      break;
    default:
      res = await send("GET", "/v1/sessions?limit=5");
  }
  // A stream admitted would be a hole in the streams limit: it is counted apart.
  let label = res.status === 200 && i % 4 === 2 ? "200 stream" : String(res.status);
  if (res.status === 429) label += ` ${(JSON.parse(res.text) as { error: { details: { limit: string } } }).error.details.limit}`;
  counts[label] = (counts[label] ?? 0) + 1;
}

async function worker(n: number): Promise<void> {
  let due = performance.now() + (gapMs * n) / workers;
  for (let i = n; !ending; i++) {
    if (!running) {
      busy -= 1;
      await new Promise<void>((r) => wake.push(r));
      busy += 1;
      due = performance.now() + (gapMs * n) / workers;
      continue;
    }
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    due = Math.max(due + gapMs, performance.now());
    if (running) await once(i);
  }
}

busy = workers;
const all = Array.from({ length: workers }, (_, n) => worker(n));
const ack = async () => {
  // "stop" is obeyed once every worker's request in flight came back.
  while (!running && busy > 0) await new Promise((r) => setTimeout(r, 1));
  process.stdout.write("ok\n");
};
createInterface({ input: process.stdin }).on("line", (line) => {
  if (line === "go") {
    running = true;
    const waiting = wake;
    wake = [];
    for (const w of waiting) w();
    void ack();
  } else if (line === "stop") {
    running = false;
    void ack();
  } else if (line === "end") {
    ending = true;
    running = false;
    for (const w of wake) w();
    void Promise.all(all).then(() => {
      process.stdout.write(`${JSON.stringify(counts)}\n`);
      process.exit(0);
    });
  }
});
process.stdout.write("ready\n");
