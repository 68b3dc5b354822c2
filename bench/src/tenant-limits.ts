// Section 16 (issue 32): tenant limits. One API key sits at every one of its limits (sessions open,
// calls in flight, SSE streams, journal bytes of a session) and keeps asking for more at its request
// rate limit and beyond, from a child process; meanwhile another key's round trip (a user turn,
// POST …/messages with wait: true) is measured against the same round trip while the noisy key is
// quiet, in alternating blocks of one run. Goal: within 2× of the idle server's.
import { spawn } from "node:child_process";
import { request } from "node:http";
import type { ClientRequest } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { z } from "zod";
import { Brain, tool } from "@aexhq/brain";
import { startBrain } from "@aexhq/brain-runtime";
import type { BenchConfig } from "./config.ts";
import { figure } from "./report.ts";
import type { Section } from "./report.ts";
import { round, summarize, now } from "./stats.ts";

const TOKEN = "bench-tenant-limits-operator-token";
const LIMITS = { sessions: 4, callsInFlight: 4, streams: 2, requestsPerSecond: 50, journalBytes: 16 * 1024 };
const BLOCKS = 10;
/** What the noisy key asks for: twice its request rate, so it is held at that limit too. */
const OFFERED_PER_SECOND = 2 * LIMITS.requestsPerSecond;

/** A tool that never finishes: its calls stay in flight (the noisy key's calls-in-flight limit). */
const hang = tool({ name: "hang", description: "Never finishes.", input: z.object({}), run: () => new Promise<never>(() => {}) });

async function api(url: string, token: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const parsed = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

export async function tenantLimits(cfg: BenchConfig, log: (s: string) => void): Promise<Section> {
  const workers = cfg.mode === "smoke" ? 2 : 8;
  const s: Section = { id: "16", title: `16. Tenant limits (one key at its limits, asking ${OFFERED_PER_SECOND} req/s from a child process; another key's user turn; SQLite)`, figures: [], notes: [] };
  const dataDir = mkdtempSync(join(tmpdir(), "brain-bench-limits-"));
  const brain = await startBrain({ dataDir, port: 0, token: TOKEN, models: {} });
  const streams: ClientRequest[] = [];
  let noisyBrain: Brain | undefined;
  let child: ReturnType<typeof spawn> | undefined;
  try {
    const noisy = await api(brain.url, TOKEN, "POST", "/v1/keys", { name: "noisy" });
    const quiet = await api(brain.url, TOKEN, "POST", "/v1/keys", { name: "quiet" });
    await api(brain.url, TOKEN, "PATCH", `/v1/keys/${noisy.id}`, { limits: LIMITS });
    log(`  tenant limits: putting key "noisy" at its limits ${JSON.stringify(LIMITS)}`);
    // Journal bytes: a session whose script (in session.created) and its one reply fill its journal past the limit.
    const full = await api(brain.url, noisy.key, "POST", "/v1/sessions", { model: { provider: "scripted", script: [{ text: "x".repeat(LIMITS.journalBytes / 2) }] }, tools: [] });
    await api(brain.url, noisy.key, "POST", `/v1/sessions/${full.id}/messages`, { text: "fill", wait: true });
    // Calls in flight: a session whose model asks for four calls at once of a tool that never finishes.
    noisyBrain = new Brain({ url: brain.url, token: noisy.key });
    const calling = await noisyBrain.sessions.create({ model: { provider: "scripted", script: [{ toolCalls: Array.from({ length: LIMITS.callsInFlight }, () => ({ name: "hang", input: {} })) }] }, tools: [hang({})] });
    void calling.send("go").catch(() => {});
    // Sessions: two more (four with the two above).
    const watched = await api(brain.url, noisy.key, "POST", "/v1/sessions", { model: { provider: "scripted", script: [] }, tools: [] });
    await api(brain.url, noisy.key, "POST", "/v1/sessions", { model: { provider: "scripted", script: [] }, tools: [] });
    // Streams: two open SSE streams, read as they come (node:http: fetch's client may close a body
    // nobody reads once it is collected, which would free the key's places).
    for (let i = 0; i < LIMITS.streams; i++) {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(`${brain.url}/v1/sessions/${watched.id}/events`, { headers: { authorization: `Bearer ${noisy.key}`, accept: "text/event-stream" } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on("error", reject);
        streams.push(req);
        req.end();
      });
      if (status !== 200) throw new Error(`noisy stream ${i}: ${status}`);
    }
    for (let t = 0; ; t++) {
      const view = await api(brain.url, noisy.key, "GET", `/v1/sessions/${calling.id}`);
      if (view.openCalls.length === LIMITS.callsInFlight) break;
      if (t > 500) throw new Error(`the noisy key's calls never reached ${LIMITS.callsInFlight} in flight: ${JSON.stringify(view.openCalls)}`);
      await new Promise((r) => setTimeout(r, 10));
    }

    // The quiet key's session: one scripted reply per measured turn.
    const iterations = cfg.mode === "full" ? 2000 : cfg.mode === "quick" ? 400 : 20;
    const warm = cfg.mode === "smoke" ? 5 : 300;
    const turns = 2 * iterations + 2 * warm + 10;
    const session = await api(brain.url, quiet.key, "POST", "/v1/sessions", { model: { provider: "scripted", script: Array.from({ length: turns }, () => ({ text: "ok" })) }, tools: [] });
    const turn = async () => {
      const r = await api(brain.url, quiet.key, "POST", `/v1/sessions/${session.id}/messages`, { text: "ping", wait: true });
      if (r.status !== "completed") throw new Error(`quiet turn: ${JSON.stringify(r)}`);
    };

    const childFile = fileURLToPath(new URL("./noisy-child.ts", import.meta.url));
    child = spawn(process.execPath, [...process.execArgv, childFile, JSON.stringify({ url: brain.url, token: noisy.key, sessionId: watched.id, fullSessionId: full.id, workers, perSecond: OFFERED_PER_SECOND })], { stdio: ["pipe", "pipe", "inherit"] });
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const expect = async (want: string) => {
      const { value } = await lines.next();
      if (value !== want) throw new Error(`noisy child said ${JSON.stringify(value)}, expected ${want}`);
    };
    const command = async (c: "go" | "stop") => {
      child!.stdin!.write(`${c}\n`);
      await expect("ok");
    };
    await expect("ready");

    log(`  tenant limits: ${warm} warm-up turns each way, then ${iterations} measured, idle and under the noisy key in alternating blocks`);
    for (let i = 0; i < warm; i++) await turn();
    await command("go");
    const warmStart = performance.now();
    for (let i = 0; i < warm; i++) await turn();
    // The child counts every answer since its first "go": the warm-up's loaded time counts too.
    let loadedMs = performance.now() - warmStart;
    await command("stop");
    const idle: number[] = [];
    const loaded: number[] = [];
    const perBlock = Math.max(1, Math.ceil(iterations / BLOCKS));
    const startedCpu = process.cpuUsage();
    for (let done = 0; done < iterations; done += perBlock) {
      const n = Math.min(perBlock, iterations - done);
      for (let i = 0; i < n; i++) {
        const t = now();
        await turn();
        idle.push(now() - t);
      }
      await command("go");
      const t0 = performance.now();
      for (let i = 0; i < n; i++) {
        const t = now();
        await turn();
        loaded.push(now() - t);
      }
      loadedMs += performance.now() - t0;
      await command("stop");
    }
    const cpuS = (process.cpuUsage(startedCpu).user + process.cpuUsage(startedCpu).system) / 1e6;
    child.stdin!.write("end\n");
    const { value: countsLine } = await lines.next();
    const counts = JSON.parse(countsLine as string) as Record<string, number>;
    const noisyRequests = Object.values(counts).reduce((a, b) => a + b, 0);
    const refused = Object.entries(counts).filter(([k]) => k.startsWith("429")).reduce((a, [, v]) => a + v, 0);

    const a = summarize(loaded);
    const b = summarize(idle);
    s.figures.push(
      figure("another key's user turn while one key is at its limits, p50", round(a.p50us / 1000, 3), "ms", { name: "idle server", value: round(b.p50us / 1000, 3) }, { text: "≤ 2× an idle server's", pass: a.p50us <= 2 * b.p50us }),
      figure("another key's user turn while one key is at its limits, p99", round(a.p99us / 1000, 3), "ms", { name: "idle server", value: round(b.p99us / 1000, 3) }),
      figure("noisy key's requests answered while it ran", round(noisyRequests / (loadedMs / 1000), 0), "req/s"),
    );
    s.notes.push(
      `noisy key "noisy": limits ${JSON.stringify(LIMITS)}, held at sessions (4 open), calls in flight (4 calls of a tool that never finishes, Node SDK host), streams (2 open SSE streams) and journal bytes (a session whose script and its one reply hold ${LIMITS.journalBytes} bytes) before anything is measured, in both series`,
      `while measured it asks for more from a child process at ${OFFERED_PER_SECOND} requests/s (twice its rate limit; ${workers} workers, each on its own schedule, a late request sent at once), round robin: POST /v1/sessions, POST …/messages to the full session, an SSE stream, GET /v1/sessions?limit=5; answers: ${Object.entries(counts).sort().map(([k, v]) => `${k}: ${v}`).join(", ")} (${refused} of ${noisyRequests} refused 429)`,
      `quiet key "quiet" (no limits of its own): POST /v1/sessions/:id/messages {wait:true} on a scripted session answering "ok", fetch over loopback; ${warm} unmeasured turns idle and as many loaded, then ${iterations} of each in ${BLOCKS} alternating blocks (the child paused between blocks, each pause acknowledged once its workers' requests came back); server and quiet client share this process (${round(cpuS, 1)} CPU s over the measured blocks)`,
      `limits that are per node (request rate, streams, calls in flight) and per store (sessions, journal bytes) are refused from memory or the session's running count; only POST /v1/sessions reads the store (one count over the owner index)`,
    );
  } finally {
    child?.kill();
    for (const req of streams) req.destroy();
    await noisyBrain?.close();
    await brain.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return s;
}
