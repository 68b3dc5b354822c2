// Section 8: history at rest. A data dir with an empty journal and one holding ≥ 1,000,000 records
// (sessions shaped like a real one, written straight through the store); the real server (`brain
// serve`) started on each as a child process: time from spawn to the first 200 on /healthz, its RSS
// right then, and the time to read one old session's events.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Brain } from "@aexhq/brain";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { startBrain } from "@aexhq/brain-runtime";
import type { BenchConfig } from "./config.ts";
import { sdkEcho } from "./fixture.ts";
import { figure } from "./report.ts";
import type { Section } from "./report.ts";
import { round } from "./stats.ts";

/** Bumped when the fixture's layout (below) changes; the cache key also hashes the store's sources and a real session's records. */
const FIXTURE_VERSION = "history-v1";
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CACHE = join(ROOT, "node_modules", ".cache", "brain-bench");
const TOKEN = "bench-history-token";
const HOST = { id: "bench-history-host", secret: "bench-history-secret-0123456789" };
/** Turns of the template session: session.created + 8 turns of 12 records = 97 records today. */
const TEMPLATE_TURNS = 8;
/** Sessions whose turns are spread over the whole history (created first, resumed now and then until the end): the "old sessions" read back. */
const OLD_SESSIONS = 10;
/** Sessions running at once in the rest of the history (their turns interleave in the log). */
const WAVE = 64;

/** The runtime's own code, as this bench measures it: dist/ when the packages resolve there, else the sources. */
export function fromSource(): boolean {
  return import.meta.resolve("@aexhq/brain-runtime").endsWith(".ts");
}

export interface StoreLike {
  append(r: JournalRecord, onCommit?: (r: JournalRecord) => void): Promise<unknown>;
  flush(): Promise<void>;
  close(): Promise<void>;
  /** One session's records as stored: `read` (paged store) or `loadSession` (the store before issue 15). */
  read?(id: string): JournalRecord[] | Promise<JournalRecord[]>;
  loadSession?(id: string): JournalRecord[];
  /** Synchronous before the storage interfaces became asynchronous (issue 27); either is awaited. */
  loadHosts(): unknown[] | Promise<unknown[]>;
  saveHost(row: unknown): void | Promise<void>;
  saveKey(row: unknown): void | Promise<void>;
}

/** The runtime's SqliteStore on `file`, from dist/ or the sources as this bench measures the runtime. */
export async function openStore(file: string): Promise<StoreLike> {
  const rel = fromSource() ? "runtime/src/journal/sqlite.ts" : "runtime/dist/journal/sqlite.js";
  const mod = (await import(new URL(rel, `file://${ROOT}`).href)) as { SqliteStore: new (file: string) => StoreLike };
  return new mod.SqliteStore(file);
}

/** One real session (SQLite journal, Node SDK host, TEMPLATE_TURNS turns with one tool call each), as the store holds it. */
async function templateSession(): Promise<{ records: JournalRecord[]; hosts: unknown[] }> {
  const dir = mkdtempSync(join(tmpdir(), "brain-bench-template-"));
  try {
    const brain = await startBrain({ dataDir: dir, port: 0 });
    const client = new Brain({ url: brain.url, token: brain.token, host: HOST });
    let id: string;
    try {
      const script = Array.from({ length: TEMPLATE_TURNS }, () => [{ toolCalls: [{ name: "echo", input: { x: 1 } }] }, { text: "done" }]).flat();
      const session = await client.sessions.create({ model: { provider: "scripted", script }, tools: [sdkEcho()] });
      id = session.id;
      for (let i = 0; i < TEMPLATE_TURNS; i++) await session.send(`question ${i + 1}: look this up`);
    } finally {
      await client.close();
      await brain.close();
    }
    const store = await openStore(join(dir, "journal.sqlite"));
    try {
      // Normalized: a placeholder id and relative times, so the same runtime gives the same template.
      const stored = await (store.read ? store.read(id) : store.loadSession!(id));
      const t0 = stored[0]!.at;
      const text = JSON.stringify(stored.map((r) => ({ ...r, at: r.at - t0 }))).replaceAll(id, "@SESSION@");
      return { records: JSON.parse(text) as JournalRecord[], hosts: await store.loadHosts() };
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const sessionId = (i: number) => `ses_${i.toString(16).padStart(20, "0")}`;

interface FixtureMeta {
  records: number;
  sessions: number;
  perSession: number;
  oldSessions: string[];
  buildS: number;
}

/** Chunks of a session: [session.created] then one per turn (message.user … up to the next). */
function chunksOf(template: JournalRecord[]): JournalRecord[][] {
  const chunks: JournalRecord[][] = [[]];
  for (const r of template) {
    if (r.type === "message.user") chunks.push([]);
    chunks[chunks.length - 1]!.push(r);
  }
  return chunks;
}

/**
 * Writes `sessions` copies of the template through the store. The first `old` sessions are created
 * first and each of their turns lands at an even point of the whole history (sessions resumed now
 * and then over the journal's life); the rest run WAVE at a time, their turns interleaved.
 */
async function writeHistory(file: string, template: { records: JournalRecord[]; hosts: unknown[] }, sessions: number, old: number, spanMs: number): Promise<void> {
  const store = await openStore(file);
  const chunks = chunksOf(template.records);
  const tplText = chunks.map((c) => JSON.stringify(c));
  const total = sessions * template.records.length;
  const t0 = Date.now() - spanMs;
  let written = 0;
  let unflushed = 0;
  let failed: unknown;
  const put = async (i: number, chunk: number) => {
    const at = t0 + Math.floor((written / total) * spanMs);
    for (const r of JSON.parse(tplText[chunk]!.replaceAll("@SESSION@", sessionId(i))) as JournalRecord[]) {
      // Appends of one tick share a transaction (group commit); a flush every ~5000 bounds the batch.
      store.append({ ...r, at: at + r.at } as JournalRecord).catch((e) => (failed ??= e));
      written++;
      unflushed++;
    }
    if (unflushed >= 5000) {
      unflushed = 0;
      await store.flush();
      if (failed !== undefined) throw failed;
    }
  };
  try {
    for (const h of template.hosts) await store.saveHost(h);
    for (let i = 0; i < old; i++) await put(i, 0);
    const oldTurns = chunks.length - 1;
    let nextOld = 1;
    const dueOld = async () => {
      // Turn j of the old sessions is written once j/(turns+1) of the history is.
      while (nextOld <= oldTurns && written >= (nextOld / (oldTurns + 1)) * total) {
        for (let i = 0; i < old; i++) await put(i, nextOld);
        nextOld++;
      }
    };
    for (let w = old; w < sessions; w += WAVE) {
      const wave = Array.from({ length: Math.min(WAVE, sessions - w) }, (_, k) => w + k);
      for (let c = 0; c < chunks.length; c++) {
        for (const i of wave) await put(i, c);
        await dueOld();
      }
    }
    while (nextOld <= oldTurns) {
      for (let i = 0; i < old; i++) await put(i, nextOld);
      nextOld++;
    }
    await store.flush();
    if (failed !== undefined) throw failed;
  } finally {
    await store.close();
  }
}

/** The fixture's data dir, built once per key (slow: about a minute per million records) and cached. */
async function historyFixture(records: number, template: { records: JournalRecord[]; hosts: unknown[] }, log: (s: string) => void): Promise<{ dir: string; meta: FixtureMeta; cached: boolean }> {
  // Keyed by what the records are (times and the host row's random salt left out) and the store's code.
  const storeSrc = ["runtime/src/journal/sqlite.ts", "runtime/src/journal/store.ts"].map((p) => readFileSync(join(ROOT, p), "utf8")).join("\n");
  const hash = createHash("sha256").update(FIXTURE_VERSION).update(JSON.stringify(template.records.map((r) => ({ ...r, at: 0 })))).update(storeSrc).digest("hex").slice(0, 12);
  const name = `history-${records}-${hash}`;
  const dir = join(CACHE, name);
  mkdirSync(CACHE, { recursive: true });
  // Older fixtures of this size (another store or template) are dropped: they can be large.
  for (const d of readdirSync(CACHE)) if (d.startsWith(`history-${records}-`) && d !== name) rmSync(join(CACHE, d), { recursive: true, force: true });
  if (existsSync(join(dir, "meta.json"))) return { dir, meta: JSON.parse(readFileSync(join(dir, "meta.json"), "utf8")) as FixtureMeta, cached: true };
  const perSession = template.records.length;
  const sessions = Math.ceil(records / perSession);
  log(`  history at rest: building the ${sessions * perSession}-record fixture (${sessions} sessions × ${perSession}), cached in ${dir}`);
  const building = `${dir}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  const t = Date.now();
  await writeHistory(join(building, "journal.sqlite"), template, sessions, Math.min(OLD_SESSIONS, sessions), 30 * 86_400_000);
  const meta: FixtureMeta = { records: sessions * perSession, sessions, perSession, oldSessions: Array.from({ length: Math.min(OLD_SESSIONS, sessions) }, (_, i) => sessionId(i)), buildS: round((Date.now() - t) / 1000, 1) };
  writeFileSync(join(building, "meta.json"), JSON.stringify(meta));
  renameSync(building, dir);
  return { dir, meta, cached: false };
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]);
}

interface Started {
  url: string;
  startMs: number;
  rssKiB: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** `brain serve` on a copy of `fixture` (the server may migrate what it opens): spawn → first 200 on /healthz. */
async function startServer(fixture: string | undefined): Promise<Started> {
  const dataDir = mkdtempSync(join(tmpdir(), "brain-bench-history-"));
  if (fixture) copyFileSync(join(fixture, "journal.sqlite"), join(dataDir, "journal.sqlite"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // The CLI users run: bin/brain.mjs imports dist/cli.js in its own process; from the sources, cli.ts through tsx directly (so the pid is the server's).
  const args = fromSource() ? ["--conditions=brain-source", "--import", "tsx", join(ROOT, "runtime/src/cli.ts"), "serve"] : [join(ROOT, "runtime/bin/brain.mjs"), "serve"];
  const env = { ...process.env, BRAIN_DATA_DIR: dataDir, BRAIN_PORT: String(port), BRAIN_HOST: "127.0.0.1", BRAIN_TOKEN: TOKEN, BRAIN_JOURNAL: "sqlite" };
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { env, cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr = (stderr + String(d)).slice(-4000)));
  let exited: number | null | undefined;
  const exit = new Promise<void>((r) => child.once("exit", (code) => ((exited = code), r())));
  const stop = async () => {
    if (exited === undefined) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
      await exit;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    for (;;) {
      if (exited !== undefined) throw new Error(`brain serve exited (${exited}) before /healthz answered: ${stderr}`);
      if (performance.now() - t0 > 600_000) throw new Error("brain serve: no /healthz within 600 s");
      const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
      if (ok) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const startMs = performance.now() - t0;
    return { url, startMs, rssKiB: rssKiB(child.pid!), child, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

const auth = { authorization: `Bearer ${TOKEN}` };

/** Each old session's events read once (the first read after the start), then one of them `warm` times more. */
async function readOld(url: string, ids: string[], warmUpId: string, warm: number): Promise<{ coldMs: number[]; warmMs: number[]; records: number }> {
  // A second for whatever the server finishes after it listens (its checkpoint thread starting), then
  // reads of another (newer) session, so the connection, the route and the JSON path are warm: only the old session's read differs.
  await new Promise((r) => setTimeout(r, 1000));
  for (let i = 0; i < 200; i++) {
    const r = await fetch(`${url}/v1/sessions/${warmUpId}/events`, { headers: auth });
    if (!r.ok) throw new Error(`events of ${warmUpId}: ${r.status} ${await r.text()}`);
    await r.arrayBuffer();
  }
  const read = async (id: string) => {
    const t = performance.now();
    const res = await fetch(`${url}/v1/sessions/${id}/events`, { headers: auth });
    const body = (await res.json()) as { records: JournalRecord[] };
    const ms = performance.now() - t;
    if (!res.ok) throw new Error(`events of ${id}: ${res.status} ${JSON.stringify(body)}`);
    return { ms, n: body.records.length };
  };
  const coldMs: number[] = [];
  let records = 0;
  for (const id of ids) {
    const r = await read(id);
    coldMs.push(r.ms);
    records = r.n;
  }
  const warmMs: number[] = [];
  for (let i = 0; i < warm; i++) warmMs.push((await read(ids[0]!)).ms);
  return { coldMs, warmMs, records };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export async function historyAtRest(cfg: BenchConfig, log: (s: string) => void): Promise<Section> {
  const s: Section = { id: "8", title: `8. History at rest (brain serve as a child process, SQLite journal: empty vs ${cfg.historyRecords.toLocaleString("en")}+ records)`, figures: [], notes: [] };
  log("  history at rest: template session");
  const template = await templateSession();
  const fx = await historyFixture(cfg.historyRecords, template, log);
  const label = `${(fx.meta.records / 1e6).toFixed(fx.meta.records >= 1e6 ? 2 : 3)}M records`;
  // The baseline for reads: a journal holding only the old sessions, written the same way.
  const small = mkdtempSync(join(tmpdir(), "brain-bench-history-small-"));
  const starts = cfg.mode === "full" ? 3 : cfg.mode === "quick" ? 2 : 1;
  try {
    // The old sessions and one more (read to warm up, as in the history).
    await writeHistory(join(small, "journal.sqlite"), template, fx.meta.oldSessions.length + 1, fx.meta.oldSessions.length, 30 * 86_400_000);
    const warmUpId = sessionId(fx.meta.oldSessions.length);
    const empty: Started[] = [];
    const full: Started[] = [];
    let fullReads: Awaited<ReturnType<typeof readOld>> | undefined;
    // Starts alternate (empty, history, …) so a change of machine speed falls on both; medians are reported.
    for (let k = 0; k < starts; k++) {
      log(`  history at rest: start ${k + 1}/${starts} on the empty journal`);
      const e = await startServer(undefined);
      await e.stop();
      empty.push(e);
      log(`  history at rest: start ${k + 1}/${starts} on ${label}`);
      const f = await startServer(fx.dir);
      try {
        if (k === 0) fullReads = await readOld(f.url, fx.meta.oldSessions, warmUpId, 20);
      } finally {
        await f.stop();
      }
      full.push(f);
    }
    log("  history at rest: reads on the old sessions alone");
    const b = await startServer(small);
    let baseReads: Awaited<ReturnType<typeof readOld>>;
    try {
      baseReads = await readOld(b.url, fx.meta.oldSessions, warmUpId, 20);
    } finally {
      await b.stop();
    }
    const eStart = median(empty.map((x) => x.startMs));
    const fStart = median(full.map((x) => x.startMs));
    const eRss = median(empty.map((x) => x.rssKiB)) / 1024;
    const fRss = median(full.map((x) => x.rssKiB)) / 1024;
    // The goals are stated for ≥ 1,000,000 records; a smaller fixture (--quick, smoke) is evaluated against them and says so.
    const large = fx.meta.records >= 1_000_000;
    const at = large ? "" : ` (at ${label}, not the goal's 1M)`;
    s.figures.push(figure(`restart to first 200 on /healthz, ${label}`, round(fStart, 0), "ms", { name: "empty journal", value: round(eStart, 0) }, { text: `restart time ≤ 3× the empty journal's${at}`, pass: fStart <= 3 * eStart }));
    s.figures.push(figure(`RSS right after restart, ${label}`, round(fRss, 1), "MiB", { name: "empty journal", value: round(eRss, 1) }, { text: `RSS after restart ≤ 1.3× the empty journal's${at}`, pass: fRss <= 1.3 * eRss }));
    const fCold = median(fullReads!.coldMs);
    const bCold = median(baseReads.coldMs);
    s.figures.push(figure(`read one old session's events (first read after restart), ${label}`, round(fCold, 2), "ms", { name: "journal of the old sessions alone", value: round(bCold, 2) }, { text: `reading one old session ≤ 1.5× with the history as without${at}`, pass: fCold <= 1.5 * bCold }));
    s.figures.push(figure(`read it again (p50 of 20), ${label}`, round(median(fullReads!.warmMs), 2), "ms", { name: "journal of the old sessions alone", value: round(median(baseReads.warmMs), 2) }));
    s.notes.push(
      `fixture: ${fx.meta.sessions} sessions × ${fx.meta.perSession} records (a real session's records as its store held them: session.created with a scripted model and one host tool, then ${TEMPLATE_TURNS} turns of message.user … turn.completed with one tool call each; every session finished), written through SqliteStore.append; ${fx.cached ? "from the cache" : `built in ${fx.meta.buildS} s and cached`} (node_modules/.cache/brain-bench, keyed by the store's sources and the template)`,
      `layout: ${fx.meta.oldSessions.length} old sessions created first, each turn of theirs written at an even point of the whole history (resumed now and then until the end); the other sessions run ${WAVE} at a time, their turns interleaved in the log`,
      `restart: median of ${starts} starts each, empty and history alternating, each on a fresh copy of the fixture; spawn → first 200 on /healthz (polled every 5 ms), RSS = the child's VmRSS right then; the server is ${fromSource() ? "runtime/src/cli.ts through tsx" : "runtime/bin/brain.mjs serve (dist/)"}`,
      `read: GET /v1/sessions/:id/events of each of the ${fx.meta.oldSessions.length} old sessions once (${fullReads!.records} records each), median, 1 s after the start and 200 reads of a newer session (warm-up: the JIT state of a server that just recovered 1M records differs from an empty one's); the baseline reads the same sessions from a journal that holds only them. Goal: the same cost with the history (≤ 1.5×)`,
    );
    if (!large) s.notes.push(`${cfg.mode}: a ${label} fixture instead of 1,000,000+ (the goals are stated for ≥ 1M records and marked here against the smaller one; the full run measures 1M)`);
  } finally {
    rmSync(small, { recursive: true, force: true });
  }
  return s;
}
