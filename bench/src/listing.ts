// Section 13 (issue 27): listing by page. GET /v1/sessions?limit=25 (the first page, what /ui loads on
// every visit) on a SQLite journal of 1,000,000 sessions beside one of 1,000, for an API key and for
// the operator token: a page's cost must not follow the number of sessions.
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { startBrain } from "@aexhq/brain-runtime";
import type { BenchConfig } from "./config.ts";
import { openStore } from "./history.ts";
import { interleavedLatency } from "./interleave.ts";
import { figure } from "./report.ts";
import type { Section } from "./report.ts";
import { round } from "./stats.ts";

/** Bumped when the fixture's layout (below) changes; the cache key also hashes the store's sources. */
const FIXTURE_VERSION = "listing-v1";
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CACHE = join(ROOT, "node_modules", ".cache", "brain-bench");
export const TOKEN = "bench-listing-token";
/** The journal of the baseline. */
export const SMALL = 1_000;
/** API keys owning the sessions round robin (8 in 10 sessions; the operator token created the rest). */
export const KEYS = 8;
export const PAGE = 25;
/** Creation times: one session every 2.6 s over 30 days at a million, fixed so fixtures are reproducible. */
const T0 = Date.parse("2026-11-01T00:00:00Z");
const SPAN_MS = 30 * 86_400_000;

/** Key j: a fixed id and secret, stored as the KeyRing stores them (SHA-256 of the secret). */
export function benchKey(j: number): { keyId: string; secret: string; token: string } {
  const keyId = j.toString(16).padStart(12, "0");
  const secret = createHash("sha256").update(`bench-listing-key-${j}`).digest("base64url");
  return { keyId, secret, token: `bk_${keyId}_${secret}` };
}

export const sessionId = (i: number) => `ses_${i.toString(16).padStart(20, "0")}`;
/** Session i's owner: key i % 10 for i % 10 < KEYS, else the operator. */
export const ownerOf = (i: number) => (i % 10 < KEYS ? benchKey(i % 10).keyId : undefined);
/** One session in 7 is deleted (a second record), so every listing merges two of its three state ranges. */
const deleted = (i: number) => i % 7 === 3;

/** What writing the fixture needs of a store (SqliteStore and PostgresStore both have it). */
export interface FixtureStore {
  append(r: JournalRecord, onCommit?: (r: JournalRecord) => void): Promise<unknown>;
  flush(): Promise<void>;
  saveKey(k: { keyId: string; name: string; hash: string; createdAt: number }): Promise<void> | void;
}

/**
 * `sessions` sessions written through the store's append (group commits, a flush every 5000 records):
 * each a session.created record (a scripted model, one host tool, as small as a real session's), one
 * in seven followed by session.deleted. Listing reads the directory (heads), never the rest of a
 * session's records, so a session of two records measures what a page costs as well as one of 100.
 */
export async function writeSessionsInto(store: FixtureStore, sessions: number): Promise<void> {
  let failed: unknown;
  for (let j = 0; j < KEYS; j++) {
    const k = benchKey(j);
    await store.saveKey({ keyId: k.keyId, name: `bench-${j}`, hash: createHash("sha256").update(k.secret).digest("hex"), createdAt: T0 });
  }
  let unflushed = 0;
  for (let i = 0; i < sessions; i++) {
    const id = sessionId(i);
    const at = T0 + Math.floor((i / sessions) * SPAN_MS);
    const owner = ownerOf(i);
    const data = {
      model: { provider: "scripted", script: [{ text: "done" }] },
      tools: [{ contract: { name: "echo", description: "Echo the input.", inputSchema: { type: "object" }, digest: "0".repeat(64) }, options: {}, placement: { kind: "host", hostId: "bench-host" } }],
      ...(owner !== undefined ? { owner } : {}),
    };
    store.append({ sessionId: id, sequence: 1, at, type: "session.created", data } as JournalRecord).catch((e) => (failed ??= e));
    unflushed++;
    if (deleted(i)) {
      store.append({ sessionId: id, sequence: 2, at: at + 1000, type: "session.deleted", data: {} } as JournalRecord).catch((e) => (failed ??= e));
      unflushed++;
    }
    if (unflushed >= 5000) {
      unflushed = 0;
      await store.flush();
      if (failed !== undefined) throw failed;
    }
  }
  await store.flush();
  if (failed !== undefined) throw failed;
}

async function writeSessions(file: string, sessions: number): Promise<void> {
  const store = (await openStore(file)) as unknown as FixtureStore & { close(): Promise<void> };
  try {
    await writeSessionsInto(store, sessions);
  } finally {
    await store.close();
  }
}

/** The fixture's data dir, built once per size and store code, and cached (a million sessions take a few minutes). */
async function listingFixture(sessions: number, log: (s: string) => void): Promise<{ dir: string; buildS?: number }> {
  const storeSrc = ["runtime/src/journal/sqlite.ts", "runtime/src/journal/store.ts", "runtime/src/journal/head.ts"].map((p) => readFileSync(join(ROOT, p), "utf8")).join("\n");
  const hash = createHash("sha256").update(FIXTURE_VERSION).update(storeSrc).digest("hex").slice(0, 12);
  const name = `listing-${sessions}-${hash}`;
  const dir = join(CACHE, name);
  mkdirSync(CACHE, { recursive: true });
  for (const d of readdirSync(CACHE)) if (d.startsWith(`listing-${sessions}-`) && d !== name) rmSync(join(CACHE, d), { recursive: true, force: true });
  if (existsSync(join(dir, "done"))) return { dir };
  log(`  listing: building the ${sessions.toLocaleString("en")}-session journal, cached in ${dir}`);
  const building = `${dir}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  const t = Date.now();
  await writeSessions(join(building, "journal.sqlite"), sessions);
  const buildS = round((Date.now() - t) / 1000, 1);
  writeFileSync(join(building, "done"), JSON.stringify({ sessions, buildS }));
  renameSync(building, dir);
  return { dir, buildS };
}

/** startBrain (in this process) on a fresh copy of a fixture's journal. */
async function serve(fixture: string): Promise<{ url: string; close(): Promise<void>; startMs: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), "brain-bench-listing-"));
  copyFileSync(join(fixture, "journal.sqlite"), join(dataDir, "journal.sqlite"));
  const t = performance.now();
  const brain = await startBrain({ dataDir, port: 0, token: TOKEN, models: {} });
  const startMs = performance.now() - t;
  return {
    url: brain.url,
    startMs,
    close: async () => {
      await brain.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

interface Page {
  sessions: Array<{ id: string; status: string }>;
  next?: string;
}

async function page(url: string, token: string, query: string): Promise<Page> {
  const res = await fetch(`${url}/v1/sessions?${query}`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json()) as Page;
  if (!res.ok) throw new Error(`GET /v1/sessions?${query}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** A runtime serving a fixture. */
export interface Served {
  url: string;
  startMs: number;
  close(): Promise<void>;
}

/**
 * Checks what the first pages of both servers hold, warms every query, then measures the first page
 * for an API key and the operator (the goal: at `large` sessions ≤ 1.5× at SMALL) and the operator's
 * deleted sessions, in alternating blocks. Answers the number of measured requests per query.
 */
export async function measurePages(s: Section, a: Served, b: Served, large: number, cfg: BenchConfig, log: (s: string) => void): Promise<{ iterations: number; warm: number }> {
  const label = large.toLocaleString("en");
  const key = benchKey(0).token;
  // What the pages hold: 25 sessions, newest first, a next; a key's are its own (1 in 10 of the sessions).
  for (const [url, n] of [[a.url, large], [b.url, SMALL]] as const) {
    const first = await page(url, TOKEN, `limit=${PAGE}`);
    if (first.sessions.length !== PAGE || first.next === undefined || first.sessions[0]!.id !== sessionId(n - 1)) throw new Error(`the operator's first page of ${n} sessions is wrong: ${JSON.stringify(first).slice(0, 300)}`);
    const mine = await page(url, key, `limit=${PAGE}`);
    const expected = Array.from({ length: n }, (_, i) => n - 1 - i).filter((i) => ownerOf(i) === benchKey(0).keyId).slice(0, PAGE).map(sessionId);
    if (JSON.stringify(mine.sessions.map((x) => x.id)) !== JSON.stringify(expected)) throw new Error(`the key's first page of ${n} sessions is wrong: ${JSON.stringify(mine.sessions.map((x) => x.id))}`);
  }
  const iterations = cfg.mode === "full" ? 2000 : cfg.mode === "quick" ? 500 : 20;
  // The request path keeps getting faster for the first thousand requests or so (JIT): warm every
  // query on both servers first, so the first figure measured is not the one that pays for it.
  const warm = cfg.mode === "smoke" ? 0 : 1000;
  for (let i = 0; i < warm; i++) {
    for (const url of [a.url, b.url]) for (const [token, query] of [[key, `limit=${PAGE}`], [TOKEN, `limit=${PAGE}`], [TOKEN, `limit=${PAGE}&status=deleted`]] as const) await page(url, token, query);
  }
  const measure = async (who: string, token: string, query: string, goal: boolean) => {
    log(`  listing: ${who}, ?${query}`);
    const r = await interleavedLatency(() => page(a.url, token, query), () => page(b.url, token, query), iterations);
    const value = round(r.subject.p50us / 1000, 3);
    const base = round(r.baseline.p50us / 1000, 3);
    const at = large >= 1_000_000 ? "" : ` (at ${label} sessions, not the goal's 1,000,000)`;
    s.figures.push(
      figure(`${who}, ?${query}, ${label} sessions, p50`, value, "ms", { name: `${SMALL.toLocaleString("en")} sessions`, value: base }, goal ? { text: `a page at ${label} sessions ≤ 1.5× at 1,000${at}`, pass: r.subject.p50us <= 1.5 * r.baseline.p50us } : undefined),
    );
    s.figures.push(figure(`${who}, ?${query}, ${label} sessions, p99`, round(r.subject.p99us / 1000, 3), "ms", { name: `${SMALL.toLocaleString("en")} sessions`, value: round(r.baseline.p99us / 1000, 3) }));
  };
  await measure("API key (its own sessions: 1 in 10)", key, `limit=${PAGE}`, true);
  await measure("operator token (every session)", TOKEN, `limit=${PAGE}`, true);
  await measure("operator token", TOKEN, `limit=${PAGE}&status=deleted`, false);
  if (large < 1_000_000) s.notes.push(`${cfg.mode}: ${label} sessions instead of 1,000,000 (the goal is stated for 1M; marked here against the smaller journal)`);
  return { iterations, warm };
}

export async function listingBench(cfg: BenchConfig, log: (s: string) => void): Promise<Section> {
  const large = cfg.listingSessions;
  const label = large.toLocaleString("en");
  const s: Section = { id: "13", title: `13. Listing by page (GET /v1/sessions?limit=${PAGE}, SQLite: ${label} sessions vs ${SMALL.toLocaleString("en")})`, figures: [], notes: [] };
  const big = await listingFixture(large, log);
  const small = await listingFixture(SMALL, log);
  log(`  listing: starting the runtime on ${label} and on ${SMALL.toLocaleString("en")} sessions`);
  const a = await serve(big.dir);
  const b = await serve(small.dir);
  try {
    const { iterations, warm } = await measurePages(s, a, b, large, cfg, log);
    s.notes.push(
      `fixture: ${label} and ${SMALL.toLocaleString("en")} sessions written through SqliteStore.append (group commits, a flush every 5000 records): a session.created each (scripted model, one host tool), one in 7 then deleted; owners round robin over ${KEYS} API keys and the operator (8 in 10 and 2 in 10); ${big.buildS === undefined ? "from the cache" : `the large one built in ${big.buildS} s and cached`} (node_modules/.cache/brain-bench, keyed by the store's sources)`,
      `server: startBrain in this process on a fresh copy of each journal (start ${round(a.startMs, 0)} ms and ${round(b.startMs, 0)} ms: recovery asks the directory for open work), both running; requests with fetch over loopback, ${warm} of each query on each server unmeasured, then the large and the small journal's in alternating blocks (${iterations} each after as many unmeasured), p50 and p99`,
      `a page: one index range per state over the directory (sessions_owner_listing for a key, sessions_listing for the operator), merged with the heads changed in memory in the last second, then one session.created row per listed session (journal/sqlite.ts listSessions); the views of resident sessions come from memory`,
    );
  } finally {
    await a.close();
    await b.close();
  }
  return s;
}
