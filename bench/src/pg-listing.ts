// Section 18 (issue 27): listing by page on PostgreSQL. The same fixture and queries as section 13
// (listing.ts), written through PostgresStore.append into one database of 1,000,000 sessions and one
// of 1,000 on one PostgreSQL server, each served by a runtime in this process: the first page
// (GET /v1/sessions?limit=25) must cost the same whatever the number of sessions.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startBrain } from "@aexhq/brain-runtime";
import { pgBinDir, startPgCluster } from "../../runtime/test/helpers/pg-cluster.ts";
import { freshDatabase } from "../../runtime/test/helpers/nodes.ts";
import type { BenchConfig } from "./config.ts";
import { fromSource } from "./history.ts";
import { KEYS, PAGE, SMALL, TOKEN, measurePages, writeSessionsInto } from "./listing.ts";
import type { FixtureStore, Served } from "./listing.ts";
import type { Section } from "./report.ts";
import { round } from "./stats.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The runtime's PostgresStore, from the code being measured (dist/, or the sources through tsx). */
async function openPgStore(url: string): Promise<FixtureStore & { close(): Promise<void> }> {
  const rel = fromSource() ? "runtime/src/journal/postgres.ts" : "runtime/dist/journal/postgres.js";
  const mod = (await import(new URL(rel, `file://${ROOT}`).href)) as { PostgresStore: { open(url: string): Promise<FixtureStore & { close(): Promise<void> }> } };
  return mod.PostgresStore.open(url);
}

async function fixture(clusterUrl: string, name: string, sessions: number): Promise<{ url: string; buildS: number }> {
  const url = await freshDatabase(clusterUrl, name);
  const t = Date.now();
  const store = await openPgStore(url);
  try {
    await writeSessionsInto(store, sessions);
  } finally {
    await store.close();
  }
  return { url, buildS: round((Date.now() - t) / 1000, 1) };
}

async function serve(url: string): Promise<Served> {
  const dataDir = mkdtempSync(join(tmpdir(), "brain-bench-pg-listing-"));
  const t = performance.now();
  const brain = await startBrain({ journal: url as `postgres://${string}`, dataDir, port: 0, token: TOKEN, models: {}, components: false });
  return {
    url: brain.url,
    startMs: performance.now() - t,
    close: async () => {
      await brain.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function pgListingBench(cfg: BenchConfig, log: (s: string) => void): Promise<Section> {
  const large = cfg.listingSessions;
  const label = large.toLocaleString("en");
  const s: Section = { id: "18", title: `18. Listing by page on PostgreSQL (GET /v1/sessions?limit=${PAGE}: ${label} sessions vs ${SMALL.toLocaleString("en")})`, figures: [], notes: [] };
  if (pgBinDir() === undefined) {
    s.notes.push("not measured: no PostgreSQL server binaries on this machine (runtime/test/helpers/pg-cluster.ts)");
    return s;
  }
  log("  pg listing: starting PostgreSQL (runtime/test/helpers/pg-cluster.ts)");
  const cluster = await startPgCluster();
  try {
    log(`  pg listing: writing ${label} sessions through PostgresStore.append`);
    const big = await fixture(cluster.url, "bench_listing_large", large);
    const small = await fixture(cluster.url, "bench_listing_small", SMALL);
    const a = await serve(big.url);
    const b = await serve(small.url);
    try {
      const { iterations, warm } = await measurePages(s, a, b, large, cfg, log);
      s.notes.push(
        `fixture: as section 13 (${label} and ${SMALL.toLocaleString("en")} sessions, a session.created each, one in 7 then deleted, owners round robin over ${KEYS} API keys and the operator), written through PostgresStore.append into a database each on one PostgreSQL server (runtime/test/helpers/pg-cluster.ts); the large one took ${big.buildS} s`,
        `server: startBrain in this process on each database (start ${round(a.startMs, 0)} ms and ${round(b.startMs, 0)} ms), both running; ${warm} of each query on each server unmeasured, then alternating blocks (${iterations} each), p50 and p99`,
        "a page: one index range per state over session_listing (session_listing_owner for a key, session_listing_all for the operator; kept by triggers on sessions), merged with the heads changed in memory in the last second, then one session.created row per listed session (journal/postgres.ts listSessions)",
      );
    } finally {
      await a.close();
      await b.close();
    }
  } finally {
    await cluster.stop();
  }
  return s;
}

