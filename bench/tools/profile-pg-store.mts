// CPU per call of the PostgreSQL journal store alone (issue 28): a durable throwaway server, one
// PostgresStore with a node fence, S sessions (default 64) each writing what a call outside a turn
// writes (tool.call_started; then tool.result + tool.finished together), the next call as soon as the
// last one committed, as the bench's calls-only drive does. Prints CPU µs per call of this process
// (the store, the driver, the kernel's TCP) and of the PostgreSQL server (every backend and helper),
// measured over MS ms (default 4000) after a warm-up. TURN=1 runs the calls inside an open turn.
// STATS=1 loads pg_stat_statements and prints the top statements; EXPLAIN=1 prints one batch's plan (as the writer runs it: auto_explain)
// and its parameters' bytes; PERF=1 records the writer backends with `perf record` into
// /tmp/pg-store.perf (then: perf report -i /tmp/pg-store.perf --children --sort sym -g none);
// PROF=file a CPU profile of this process over the window; THREADS=1 this process's CPU by thread;
// DATA=n larger tool results; SQL=… a schema change before the load; STORE=path another build of
// journal/postgres.ts (A/B); FSYNC=off a server with fsync off; S, MS, WARM the sizes. SIZES=1 prints
// the journal's heap and index bytes per row after the load (a layout change's effect on them).
// On a shared machine, alternate the builds and repeat: one run against another varies by ±20 %.
//   node --conditions=brain-source --import tsx bench/tools/profile-pg-store.mts
import { execFile, spawn } from "node:child_process";
import { Session } from "node:inspector/promises";
import { writeFileSync } from "node:fs";
import pg from "pg";
import { startPgCluster } from "../../runtime/test/helpers/pg-cluster.ts";
import { NodeFence } from "../../runtime/src/cluster/fence.ts";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { pgServerCpuS, postmasterOf } from "../src/proc-cpu.ts";

// STORE=path: another build of journal/postgres.ts (an A/B of a change, side by side).
const { PostgresStore } = (await import(process.env.STORE ?? "../../runtime/src/journal/postgres.ts")) as typeof import("../../runtime/src/journal/postgres.ts");
const n = Number(process.env.S ?? 64);
const ms = Number(process.env.MS ?? 4000);
const inTurn = process.env.TURN === "1";
// DATA=n: each tool.result carries n more characters of text (a tool's larger output; quotes and newlines included).
const padding = "say \"hi\"\n".repeat(Math.ceil(Number(process.env.DATA ?? 0) / 10)).slice(0, Number(process.env.DATA ?? 0));
const cluster = await startPgCluster({ durable: process.env.FSYNC !== "off" });
const admin = new pg.Client({ connectionString: cluster.url });
const port = Number(new URL(cluster.url).port);
try {
  if (process.env.STATS === "1") {
    await admin.connect();
    await admin.query("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'");
    await admin.end();
    await cluster.restart("fast");
  }
  const db = new pg.Client({ connectionString: cluster.url });
  await db.connect();
  if (process.env.STATS === "1") await db.query("CREATE EXTENSION pg_stat_statements");
  const fence = new NodeFence("bench-node");
  const store = await PostgresStore.open(cluster.url, { fence, idleTransactionTimeoutMs: 2000 });
  await db.query("INSERT INTO nodes (node_id, url, expires_at, run) VALUES ('bench-node', 'http://x', now() + interval '1 hour', 'run-1')");
  fence.joined("run-1");
  // SQL=…: a schema change to try before the load (an experiment's A/B).
  if (process.env.SQL) await db.query(process.env.SQL);
  const ids = Array.from({ length: n }, (_, i) => `ses_${String(i).padStart(4, "0")}bench0000000000`);
  const seq = new Map<string, number>();
  const at = () => Date.now();
  const rec = (sessionId: string, type: string, data: unknown) => {
    const sequence = (seq.get(sessionId) ?? 0) + 1;
    seq.set(sessionId, sequence);
    return { sessionId, sequence, at: at(), type, data } as JournalRecord;
  };
  await Promise.all(ids.map((id) => (fence.hold(id, 1), store.append(rec(id, "session.created", { tools: [{ contract: { name: "echo" }, placement: "host" }], model: { name: "scripted" }, limits: {} })))));
  if (inTurn) {
    await Promise.all(ids.map((id) => store.append(rec(id, "message.user", { text: "go", activation: 1 }))));
    await Promise.all(ids.map((id) => store.append(rec(id, "turn.started", { activation: 1 }))));
  }
  // EXPLAIN=1: one batch of the measured window is first run under EXPLAIN ANALYZE on another
  // connection, in a transaction rolled back, with the same parameters (its plan, per node).
  let explainNext = false;
  if (process.env.EXPLAIN === "1") {
    const w = (store as unknown as { writers: Array<{ client: pg.Client }> }).writers[0]!;
    const real = w.client.query.bind(w.client) as (...a: unknown[]) => Promise<unknown>;
    // A batch is a Submittable (journal/pg-batch-query.ts): query() answers it at once, and the store awaits its `done`.
    type Batch = { text: string; message: Buffer; done: Promise<string[]> };
    (w.client as unknown as { query: unknown }).query = (q: Batch | string) => {
      if (!(explainNext && typeof q === "object" && q.text.startsWith("WITH"))) return real(q);
      explainNext = false;
      // The plan the writer itself runs, through auto_explain on its own connection: an EXPLAIN
      // with the same parameters elsewhere plans for those values (a custom plan), while the
      // writer's prepared statement runs a generic plan after its fifth execution, and the two
      // differed (a nested loop over the leases in the generic one only).
      const done = (async () => {
        const notice = new Promise<string>((resolve) => w.client.once("notice", (m) => resolve(m.message ?? "")));
        await real("LOAD 'auto_explain'");
        await real("SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on; SET auto_explain.log_buffers = on; SET auto_explain.log_wal = on; SET auto_explain.log_level = notice");
        const answer = await (real(q) as unknown as Batch).done;
        await real("SET auto_explain.log_min_duration = -1");
        console.log(await notice);
        console.log(`batch message (Bind, Execute, Sync): ${q.message.length} bytes`);
        return answer;
      })();
      return { done };
    };
  }
  let calls = 0;
  let running = true;
  const loop = async (id: string) => {
    while (running) {
      const callId = `call_${id}_${(seq.get(id) ?? 0) + 1}`;
      await store.append(rec(id, "tool.call_started", { callId, tool: "echo", input: { x: 1 }, placement: "host", activation: inTurn ? 1 : 0, deadlineAt: null, modelCallId: "bench" }));
      await Promise.all([
        store.append(rec(id, "tool.result", { callId, outcome: { status: "ok", value: padding ? { x: 1, text: padding } : { x: 1 } } })),
        store.append(rec(id, "tool.finished", { callId, status: "ok" })),
      ]);
      calls++;
    }
  };
  const loops = ids.map(loop);
  await new Promise((r) => setTimeout(r, Number(process.env.WARM ?? 1500)));
  if (process.env.STATS === "1") await db.query("SELECT pg_stat_statements_reset()");
  const pm = postmasterOf(port)!;
  let perf: ReturnType<typeof spawn> | undefined;
  if (process.env.PERF === "1") {
    const { rows } = await db.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()");
    perf = spawn("perf", ["record", "-F", "2000", "-g", "-o", "/tmp/pg-store.perf", "-p", rows.map((r) => r.pid).join(",")], { stdio: "ignore" });
  }
  // PROF=file: a CPU profile of this process over the measured window only (read it with profile-top.mjs).
  const inspector = process.env.PROF ? new Session() : undefined;
  if (inspector) {
    inspector.connect();
    await inspector.post("Profiler.enable");
    await inspector.post("Profiler.start");
  }
  // This process's CPU by thread (main, V8's helpers, libuv): /proc/self/task/*/stat, ticks.
  const { readdirSync, readFileSync } = await import("node:fs");
  const threads = () => new Map(readdirSync("/proc/self/task").map((t) => {
    const st = readFileSync(`/proc/self/task/${t}/stat`, "utf8");
    const f = st.slice(st.lastIndexOf(")") + 2).split(" ");
    return [`${t} ${st.slice(st.indexOf("(") + 1, st.lastIndexOf(")"))}`, [Number(f[11]), Number(f[12])]] as const;
  }));
  const th0 = threads();
  const c0 = calls, t0 = performance.now(), me0 = process.cpuUsage(), pg0 = pgServerCpuS(pm), tx0 = store.stats.transactions;
  await new Promise((r) => setTimeout(r, ms / 2));
  explainNext = process.env.EXPLAIN === "1";
  await new Promise((r) => setTimeout(r, ms / 2));
  const c1 = calls, t1 = performance.now(), me1 = process.cpuUsage(me0), pg1 = pgServerCpuS(pm), tx1 = store.stats.transactions;
  perf?.kill("SIGINT");
  if (process.env.THREADS === "1") {
    const th1 = threads();
    const kk = calls - c0;
    console.log([...th1].map(([name, [u, s]]) => [name, ((u - (th0.get(name)?.[0] ?? 0)) * 1e4) / kk, ((s - (th0.get(name)?.[1] ?? 0)) * 1e4) / kk] as const).filter(([, u, s]) => u + s > 0.05).map(([name, u, s]) => `${name}: user ${u.toFixed(1)} sys ${s.toFixed(1)} µs/call`).join("\n"));
  }
  if (inspector) writeFileSync(process.env.PROF!, JSON.stringify((await inspector.post("Profiler.stop")).profile));
  const k = c1 - c0;
  const node = (me1.user + me1.system) / k;
  const server = ((pg1 - pg0) * 1e6) / k;
  console.log(`${n} sessions${inTurn ? " in a turn" : ""}: ${Math.round((k * 1000) / (t1 - t0))} calls/s, ${((tx1 - tx0) / k).toFixed(3)} tx/call; CPU µs per call: this process ${node.toFixed(1)} (user ${(me1.user / k).toFixed(1)}, sys ${(me1.system / k).toFixed(1)}), PostgreSQL ${server.toFixed(1)}, sum ${(node + server).toFixed(1)}`);
  running = false;
  await Promise.all(loops);
  // Whether the writers' prepared statements run a generic plan or are planned at every execution.
  for (const w of (store as unknown as { writers: Array<{ client: pg.Client }> }).writers) {
    const { rows } = await w.client.query("SELECT name, generic_plans, custom_plans FROM pg_prepared_statements");
    console.log(`writer: ${rows.map((r) => `${r.name} generic ${r.generic_plans} custom ${r.custom_plans}`).join("; ")}`);
  }
  if (process.env.STATS === "1") {
    const { rows } = await db.query("SELECT calls, round(total_exec_time::numeric, 1) AS ms, round((total_exec_time / greatest(calls, 1) * 1000)::numeric, 1) AS us_each, rows, wal_records, wal_fpi, wal_bytes, left(regexp_replace(query, '\\s+', ' ', 'g'), 140) AS q FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 15");
    console.table(rows);
  }
  if (process.env.SIZES === "1") {
    const { rows } = await db.query<{ relname: string; bytes: string; rows: string }>(
      "SELECT c.relname, pg_relation_size(c.oid) AS bytes, (SELECT count(*) FROM journal) AS rows FROM pg_class c WHERE c.oid = 'journal'::regclass OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'journal'::regclass)",
    );
    console.log(rows.map((r) => `${r.relname}: ${(Number(r.bytes) / Math.max(1, Number(r.rows))).toFixed(1)} bytes a row`).join("; "));
  }
  await store.close();
  await db.end();
  if (perf) await new Promise((r) => execFile("sleep", ["1"], r));
} finally {
  await cluster.stop();
}
