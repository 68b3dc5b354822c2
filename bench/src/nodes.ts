// `npm run bench -- --nodes` (its own mode, issue 20): several runtime nodes on one PostgreSQL.
// Every runtime node is a process of its own (node-child.ts: `brain serve` plus an IPC channel);
// the hosts (raw protocol, `ws`, one per node, connected to that node) and the load generators are in
// this process. One PostgreSQL server (runtime/test/helpers/pg-cluster.ts: initdb + pg_ctl, fsync=off),
// a database for each configuration. Figures: tool calls/s at 64 sessions for the SQLite node and 1,
// 2, 3 PostgreSQL nodes, driven two ways (calls only, as section 2; real turns of a scripted model);
// journal records and transactions per call; CPU of every process; failover time. All the
// configurations run at once and take turns with the load, in short blocks, so the shared machine's
// changes of speed fall on all of them alike (as section 1's interleaved baselines do).
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import WebSocket from "ws";
import type { PlacedTool } from "@aexhq/brain-protocol";
import { pgBinDir, startPgCluster } from "../../runtime/test/helpers/pg-cluster.ts";
import { freshDatabase } from "../../runtime/test/helpers/nodes.ts";
import type { PgCluster } from "../../runtime/test/helpers/pg-cluster.ts";
import type { NodesConfig } from "./config.ts";
import { echoContract } from "./fixture.ts";
import type { NodeReply, NodeRequest } from "./node-child.ts";
import { machineCpuS, pgServerCpuS, postmasterOf, processCpuS } from "./proc-cpu.ts";
import { figure } from "./report.ts";
import type { Figure, Section } from "./report.ts";
import { round } from "./stats.ts";

export type Drive = "calls" | "turns";
type Journal = "sqlite" | "postgres";

const TOKEN = "bench-nodes-operator-token-0001";
const REPO = fileURLToPath(new URL("../../", import.meta.url));
const CHILD = fileURLToPath(new URL("./node-child.ts", import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = () => performance.now();

// ---------------------------------------------------------------------------------------------
// Runtime nodes (subprocesses)

interface NodeProc {
  index: number;
  child: ChildProcess;
  pid: number;
  url: string;
  dataDir: string;
  request(m: NodeRequest): Promise<NodeReply>;
  output(): string;
}

/** Starts one node (node-child.ts, the runtime `from`: dist or source); resolves once it listens. */
function startNode(index: number, env: Record<string, string>, from: "dist" | "source", runtimeDir: string): Promise<NodeProc> {
  const dataDir = mkdtempSync(join(tmpdir(), "brain-bench-node-"));
  // BENCH_NODE_FLAGS="--trace-opt --trace-deopt": Node/V8 flags for every node (not NODE_OPTIONS, which refuses most V8 flags).
  const extra = process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...process.execArgv, ...extra, CHILD], {
    env: { ...process.env, ...env, BRAIN_DATA_DIR: dataDir, BRAIN_PORT: "0", BRAIN_TOKEN: TOKEN, BENCH_RUNTIME_DIR: runtimeDir, BENCH_RUNTIME_FROM: from },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  let out = "";
  // BENCH_NODE_TRACE=prefix: each node's whole stdout (where V8's traces go) also in prefix-<its database, or sqlite>-<index>.log.
  const tracePrefix = process.env.BENCH_NODE_TRACE;
  const trace = tracePrefix ? createWriteStream(`${tracePrefix}-${env.BRAIN_JOURNAL === "sqlite" ? "sqlite" : (/bench_\w+/.exec(env.BRAIN_JOURNAL ?? "")?.[0] ?? "pg")}-${index}.log`) : undefined;
  child.stdout!.on("data", (d) => {
    trace?.write(d);
    out = (out + d).slice(-20000);
  });
  child.stderr!.on("data", (d) => (out = (out + d).slice(-20000)));
  // Replies come in the order of the requests (one at a time per node).
  const waiting: Array<(r: NodeReply) => void> = [];
  child.on("message", (m: NodeReply) => waiting.shift()?.(m));
  const request = (m: NodeRequest) =>
    new Promise<NodeReply>((resolve, reject) => {
      if (!child.connected) return reject(new Error(`node ${index} is gone: ${out.slice(-2000)}`));
      waiting.push(resolve);
      child.send(m);
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node ${index}: no listening line in 60 s: ${out}`)), 60000);
    const onData = () => {
      const m = /brain listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off("data", onData);
        resolve({ index, child, pid: child.pid!, url: m[1]!, dataDir, request, output: () => out });
      }
    };
    child.stdout!.on("data", onData);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`node ${index} exited (${code ?? signal}) before listening: ${out}`));
    });
  });
}

function kill9(n: NodeProc): Promise<void> {
  return new Promise((resolve) => {
    if (n.child.exitCode !== null || n.child.signalCode !== null) return resolve();
    n.child.once("exit", () => resolve());
    n.child.kill("SIGKILL");
  });
}

async function stats(n: NodeProc): Promise<Extract<NodeReply, { type: "stats" }>> {
  const r = await n.request({ type: "stats" });
  if (r.type !== "stats") throw new Error(`node ${n.index}: ${JSON.stringify(r)}`);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Hosts (in this process): the raw protocol with `ws`, answering every invoke with one finish

/** What a host saw on its connection after `watch` was set (failover). */
interface Watch {
  invoke(sessionId: string, at: number): void;
  committed(sessionId: string, at: number): void;
}

/**
 * A raw-protocol host (`ws`) that answers every invoke with one `finish`, except for the sessions
 * it is told to hold: their invokes wait, unanswered, until `release` (how the bench pauses one
 * configuration's load while another is measured: each of its sessions then waits on an open call).
 */
class BenchHost {
  /** Invokes answered. */
  answered = 0;
  /** Invokes answered per session (turns mode: a session whose script runs out stops calling). */
  readonly perSession = new Map<string, number>();
  readonly holding = new Set<string>();
  private held: Array<{ callId: string; sessionId: string; input: unknown }> = [];
  private ref = 1;
  watch: Watch | undefined;
  /** finish ref → session, while watched. */
  private refs = new Map<number, string>();
  private corked = false;

  private constructor(
    readonly ws: WebSocket,
    readonly hostId: string,
  ) {}

  static async connect(url: string, hostId: string): Promise<BenchHost> {
    const u = new URL("/v1/hosts/connect", url);
    u.protocol = "ws:";
    const ws = new WebSocket(u);
    const host = new BenchHost(ws, hostId);
    await new Promise<void>((resolve, reject) => {
      ws.once("error", reject);
      ws.once("close", () => reject(new Error(`host ${hostId}: closed before registering`)));
      ws.once("open", () => ws.send(JSON.stringify({ type: "register", ref: host.ref++, protocol: "brain.host/0.2", token: TOKEN, hostId, secret: `secret-${hostId}-0001`, tools: [echoContract] })));
      ws.on("message", (raw) => {
        const s = String(raw);
        if (s.startsWith('{"type":"invoke"')) {
          const f = JSON.parse(s) as { callId: string; sessionId: string; input: unknown };
          if (host.holding.has(f.sessionId)) host.held.push(f);
          else host.answer(f);
        } else if (host.watch && s.startsWith('{"type":"committed"')) {
          const f = JSON.parse(s) as { ref: number };
          const sid = host.refs.get(f.ref);
          if (sid !== undefined) host.refs.delete(f.ref), host.watch.committed(sid, ms());
        } else if (s.startsWith('{"type":"registered"')) resolve();
        else if (s.startsWith('{"type":"error"')) reject(new Error(s));
      });
    });
    ws.on("error", () => {});
    return host;
  }

  private answer(f: { callId: string; sessionId: string; input: unknown }): void {
    this.answered++;
    this.perSession.set(f.sessionId, (this.perSession.get(f.sessionId) ?? 0) + 1);
    const ref = this.ref++;
    if (this.watch) {
      this.watch.invoke(f.sessionId, ms());
      this.refs.set(ref, f.sessionId);
    }
    // Corks the socket on the first send of a tick (the frames of one tick leave in one write), like fixture.ts's raw host.
    const socket = (this.ws as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
    if (!this.corked && socket !== undefined) {
      this.corked = true;
      socket.cork();
      process.nextTick(() => {
        this.corked = false;
        socket.uncork();
      });
    }
    this.ws.send(JSON.stringify({ type: "finish", ref, callId: f.callId, outcome: { status: "ok", value: f.input } }));
  }

  hold(ids: Iterable<string>): void {
    for (const id of ids) this.holding.add(id);
  }

  /** Stops holding these sessions and answers what they were waiting on. */
  release(ids: Iterable<string>): void {
    for (const id of ids) this.holding.delete(id);
    const go = this.held.filter((f) => !this.holding.has(f.sessionId));
    this.held = this.held.filter((f) => this.holding.has(f.sessionId));
    for (const f of go) this.answer(f);
  }

  close(): void {
    this.ws.terminate();
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP

async function api(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, body: parsed };
}

/** Calls mode: a script never used (no message is sent). Turns mode: `steps` model steps of one tool call each, then a text. */
function script(drive: Drive, steps: number): unknown[] {
  if (drive === "calls") return [{ text: "done" }];
  return [...Array.from({ length: steps }, () => ({ toolCalls: [{ name: "echo", input: { x: 1 } }] })), { text: "done" }];
}


// ---------------------------------------------------------------------------------------------
// Configurations, their load, and the blocks that measure it

/** One configuration: the SQLite node, or `count` PostgreSQL nodes on a database of their own. */
interface Config {
  journal: Journal;
  count: number;
  name: string;
  /** The PostgreSQL server's postmaster (its CPU is counted); undefined for the SQLite node. */
  postmaster: number | undefined;
  db: string | undefined;
  nodes: NodeProc[];
  /** Host k is connected to node k (the failover adds the reconnected one). */
  hosts: BenchHost[];
  client: pg.Client | undefined;
  loads: Partial<Record<Drive, Load>>;
  /** xact_commit and answered invokes when the load started (whole-run transactions per call). */
  xactStart: number;
  answeredStart: number;
}

/** One drive's sessions on a configuration, and what its blocks measured (summed). */
interface Load {
  config: Config;
  drive: Drive;
  ids: string[];
  /** Session i's node. */
  owner: number[];
  createMs: number;
  blocks: number[];
  seconds: number;
  calls: number;
  perNodeCalls: number[];
  nodeCpu: number[];
  pgCpu: number;
  benchCpu: number;
  machineBusy: number;
  machineSteal: number;
  records: number;
  transactions: number;
  perNodeTx: number[];
  pgRows: number;
  pgXids: number;
  rtts: number[];
  failures: string[];
}

export interface FailoverResult {
  leaseMs: number;
  sessions: number;
  /** ms from the SIGKILL. */
  hostReconnectedMs: number;
  firstAcceptedMs: number;
  firstInvokeMs: number;
  firstServedMs: number;
  allServedMs: number;
  served: number;
  attempts: number;
  takenOver: number;
  recordsPerSession: number;
  errors: string[];
}

const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
const answered = (c: Config) => sum(c.hosts.map((h) => h.answered));
/** One configuration to run: its journal, its node count, and (PostgreSQL) whether its server runs with fsync off. */
interface Plan {
  journal: Journal;
  count: number;
  fsyncOff: boolean;
}
const nameOf = (p: Plan) => (p.journal === "sqlite" ? "SQLite node" : `PostgreSQL, ${p.count} node${p.count > 1 ? "s" : ""}${p.fsyncOff ? ", fsync off" : ""}`);
const SQLITE: Plan = { journal: "sqlite", count: 1, fsyncOff: false };
const durable = (count: number): Plan => ({ journal: "postgres", count, fsyncOff: false });
/** The configurations: the SQLite node, then 1, 2, 3 PostgreSQL nodes (durable), then one node on the fsync-off server. */
const planOf = (cfg: NodesConfig): Plan[] => [SQLITE, ...cfg.nodeCounts.map(durable), ...(cfg.fsyncOff ? [{ journal: "postgres", count: 1, fsyncOff: true } as Plan] : [])];

/** What the nodes said lately (a lease lost, a failed renewal): most failures are explained there. */
function said(c: Config): string {
  return c.nodes.map((n) => `node ${n.index}: ${n.output().trim().split("\n").filter((l) => !/^(brain listening|operator token|journal:)/.test(l)).slice(-6).join(" / ") || "(nothing)"}`).join("; ");
}

async function startConfig(server: Server | undefined, plan: Plan, cfg: NodesConfig, from: "dist" | "source", runtimeDir: string, index: number): Promise<Config> {
  const { journal, count } = plan;
  const db = server !== undefined ? await freshDatabase(server.cluster.url, `bench_${index}_${count}`) : undefined;
  const common: Record<string, string> = {
    BRAIN_MAX_EMITTED_BYTES: String(2 ** 40),
    BRAIN_MAX_MODEL_CALLS: String(10 * cfg.turnSteps),
    // Paused sessions wait on a held call for the whole run; the host answers pings all along (ws does).
    BRAIN_HOST_TIMEOUT_MS: "30000",
  };
  const c: Config = { journal, count, name: nameOf(plan), postmaster: server?.postmaster, db, nodes: [], hosts: [], client: undefined, loads: {}, xactStart: NaN, answeredStart: 0 };
  const started = await Promise.allSettled(
    Array.from({ length: count }, (_, k) =>
      startNode(k, db === undefined ? { ...common, BRAIN_JOURNAL: "sqlite" } : { ...common, BRAIN_JOURNAL: db, BRAIN_LEASE_MS: String(cfg.leaseMs), BRAIN_NODE_ID: `bench-node-${k}` }, from, runtimeDir),
    ),
  );
  for (const s of started) if (s.status === "fulfilled") c.nodes.push(s.value);
  c.nodes.sort((a, b) => a.index - b.index);
  try {
    for (const s of started) if (s.status === "rejected") throw s.reason;
    for (const n of c.nodes) c.hosts.push(await BenchHost.connect(n.url, `bench-host-${n.index}`));
    if (db !== undefined) {
      c.client = new pg.Client({ connectionString: db });
      // The outage's server goes down under it: its next query fails, nothing is thrown at the process.
      c.client.on("error", () => {});
      await c.client.connect();
    }
  } catch (e) {
    await stopConfig(c);
    throw e;
  }
  return c;
}

async function stopConfig(c: Config): Promise<void> {
  for (const h of c.hosts) h.close();
  await Promise.all(c.nodes.map(kill9));
  for (const n of c.nodes) rmSync(n.dataDir, { recursive: true, force: true });
}

/**
 * A drive's sessions on a configuration, spread evenly (session i on node i % count, its tool on
 * that node's host), held by the hosts from the start, then set going: calls mode drives each in its
 * node (IPC), turns mode sends each one message. Every session then waits on its first call.
 */
async function startLoad(c: Config, drive: Drive, cfg: NodesConfig): Promise<Load> {
  const owner: number[] = [];
  const ids: string[] = [];
  const model = { provider: "scripted", script: script(drive, cfg.turnSteps) };
  // 4 at a time: a burst of big creations starves a PostgreSQL node (its writer's transaction and its
  // lease renewal wait behind them; see the README's notes on the runtime).
  const createdAt = ms();
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < cfg.sessions) {
        const i = next++;
        const k = i % c.count;
        const placed: PlacedTool = { contract: echoContract, options: {}, placement: { kind: "host", hostId: c.hosts[k]!.hostId } };
        const r = await api(c.nodes[k]!.url, "POST", "/v1/sessions", { model, tools: [placed] });
        if (r.status !== 201) throw new Error(`create session on node ${k}: ${r.status} ${JSON.stringify(r.body)}`);
        ids[i] = r.body.id;
        owner[i] = k;
        c.hosts[k]!.hold([r.body.id]);
      }
    }),
  );
  const createMs = ms() - createdAt;
  if (drive === "calls") {
    for (const n of c.nodes) {
      const r = await n.request({ type: "drive", sessions: ids.filter((_, i) => owner[i] === n.index) });
      if (r.type !== "driving") throw new Error(`node ${n.index}: ${JSON.stringify(r)}`);
    }
  } else {
    await Promise.all(
      ids.map(async (id, i) => {
        const r = await api(c.nodes[owner[i]!]!.url, "POST", `/v1/sessions/${id}/messages`, { text: "go" });
        if (r.status !== 202) throw new Error(`message to ${id}: ${r.status} ${JSON.stringify(r.body)}`);
      }),
    );
  }
  const zeros = () => c.nodes.map(() => 0);
  return { config: c, drive, ids, owner, createMs, blocks: [], seconds: 0, calls: 0, perNodeCalls: zeros(), nodeCpu: zeros(), pgCpu: 0, benchCpu: 0, machineBusy: 0, machineSteal: 0, records: 0, transactions: 0, perNodeTx: zeros(), pgRows: 0, pgXids: 0, rtts: [], failures: [] };
}

const hostOf = (l: Load, i: number) => l.config.hosts[l.owner[i]!]!;
function resume(l: Load): void {
  for (const h of new Set(l.ids.map((_, i) => hostOf(l, i)))) h.release(l.ids);
}
function pause(l: Load): void {
  for (const h of new Set(l.ids.map((_, i) => hostOf(l, i)))) h.hold(l.ids);
}

interface Snapshot {
  at: number;
  answered: number[];
  nodeCpu: number[];
  pgCpu: number;
  benchCpu: number;
  machine: { busy: number; steal: number };
  nodeStats: Array<Extract<NodeReply, { type: "stats" }>>;
  pgRows: number;
  /** The cluster's next transaction id: write transactions (every database) get one each, at once. */
  pgXid: number;
}

/** Session `s`'s last journal sequence, by the journal's primary key (its row in `sessions` may lag a running session's: journal/postgres.ts headDue). */
const LAST_SEQUENCE = "(SELECT max(j.sequence) FROM journal j WHERE j.session_id = s.session_id)";

async function snapshot(c: Config): Promise<Snapshot> {
  const { postmaster } = c;
  // The readings of this instant first; then the ones that need a round trip.
  const at = ms();
  const s = {
    at,
    answered: c.hosts.map((h) => h.answered),
    nodeCpu: c.nodes.map((n) => processCpuS(n.pid)),
    pgCpu: postmaster === undefined ? NaN : pgServerCpuS(postmaster),
    benchCpu: processCpuS("self"),
    machine: machineCpuS(),
  };
  const nodeStats = await Promise.all(c.nodes.map(stats));
  let pgRows = NaN;
  let pgXid = NaN;
  if (c.client) {
    const { rows } = await c.client.query(`SELECT (SELECT coalesce(sum(${LAST_SEQUENCE}), 0) FROM sessions s) AS n, pg_snapshot_xmax(pg_current_snapshot())::text AS xid`);
    pgRows = Number(rows[0].n);
    pgXid = Number(rows[0].xid);
  }
  return { ...s, nodeStats, pgRows, pgXid };
}

/**
 * One block of a load: the hosts answer its sessions again, `warmupMs` to reach its steady state,
 * then a `blockMs` window measured (calls answered, CPU of every process, journal counters, a
 * `SELECT 1` round trip every 100 ms), then its sessions are held again.
 */
async function block(l: Load, cfg: NodesConfig): Promise<void> {
  const c = l.config;
  resume(l);
  try {
    await sleep(cfg.warmupMs);
    const a = await snapshot(c);
    const end = ms() + cfg.blockMs;
    const probe = (async () => {
      while (c.client && ms() < end - 100) {
        const t = ms();
        await c.client.query("SELECT 1");
        l.rtts.push(ms() - t);
        await sleep(100);
      }
    })();
    await sleep(Math.max(0, end - ms()));
    await probe;
    const b = await snapshot(c);
    const seconds = (b.at - a.at) / 1000;
    const calls = sum(b.answered) - sum(a.answered);
    l.blocks.push(calls / seconds);
    l.seconds += seconds;
    l.calls += calls;
    c.nodes.forEach((_, k) => {
      l.perNodeCalls[k]! += b.answered[k]! - a.answered[k]!;
      l.nodeCpu[k]! += b.nodeCpu[k]! - a.nodeCpu[k]!;
      l.perNodeTx[k]! += b.nodeStats[k]!.transactions - a.nodeStats[k]!.transactions;
    });
    l.pgCpu += b.pgCpu - a.pgCpu;
    l.benchCpu += b.benchCpu - a.benchCpu;
    l.machineBusy += b.machine.busy - a.machine.busy;
    l.machineSteal += b.machine.steal - a.machine.steal;
    l.records += sum(b.nodeStats.map((x) => x.records)) - sum(a.nodeStats.map((x) => x.records));
    l.transactions += sum(b.nodeStats.map((x) => x.transactions)) - sum(a.nodeStats.map((x) => x.transactions));
    l.pgRows += b.pgRows - a.pgRows;
    l.pgXids += b.pgXid - a.pgXid;
    for (const x of b.nodeStats) if (x.failed > 0 && !l.failures.some((f) => f.startsWith("driven"))) l.failures.push(`driven calls failed: ${x.failed} (${x.firstError})`);
  } finally {
    pause(l);
  }
}

/**
 * SIGKILL the last node while every one of its sessions runs a turn: its host reconnects to node 0
 * (the survivor) at once; a new message is sent through node 0 to each of the dead node's sessions
 * (retried until accepted: node 0 forwards to the dead owner, waits, and serves the session itself
 * once its lease has expired and it took it over). Failover time = SIGKILL → the first call of a
 * taken-over session whose `finish` the survivor committed (the host got `committed`).
 */
async function failOver(l: Load, cfg: NodesConfig, log: (s: string) => void): Promise<FailoverResult> {
  const c = l.config;
  const victim = c.nodes[c.nodes.length - 1]!;
  const survivor = c.nodes[0]!;
  const victims = l.ids.filter((_, i) => l.owner[i] === victim.index);
  const deadline = cfg.leaseMs * 4 + 10_000;
  const errors: string[] = [];
  const firstInvoke = new Map<string, number>();
  const served = new Map<string, number>();
  let attempts = 0;
  let firstAccepted = Infinity;
  let hostReconnected = NaN;
  const watch: Watch = {
    invoke: (sid, at) => void (firstInvoke.has(sid) || firstInvoke.set(sid, at)),
    committed: (sid, at) => void (served.has(sid) || served.set(sid, at)),
  };
  log(`  nodes: failover: SIGKILL node ${victim.index} of ${c.name} (${victims.length} sessions running turns), lease ${cfg.leaseMs} ms`);
  const killedAt = ms();
  victim.child.kill("SIGKILL");
  // The victim's host: its connection drops with the process; it reconnects to the survivor.
  const oldHost = c.hosts[victim.index]!;
  const reconnect = (async () => {
    while (ms() - killedAt < deadline) {
      try {
        const h = await BenchHost.connect(survivor.url, oldHost.hostId);
        h.watch = watch;
        c.hosts.push(h);
        hostReconnected = ms() - killedAt;
        return;
      } catch (e) {
        if (errors.length < 5) errors.push(`host reconnect: ${e instanceof Error ? e.message : String(e)}`);
        await sleep(20);
      }
    }
  })();
  const messages = victims.map(async (id) => {
    while (ms() - killedAt < deadline) {
      attempts++;
      try {
        const r = await api(survivor.url, "POST", `/v1/sessions/${id}/messages`, { text: "again" });
        if (r.status === 202) {
          firstAccepted = Math.min(firstAccepted, ms() - killedAt);
          return;
        }
        if (errors.length < 5) errors.push(`message ${r.status}: ${JSON.stringify(r.body).slice(0, 200)}`);
      } catch (e) {
        if (errors.length < 5) errors.push(`message: ${e instanceof Error ? e.message : String(e)}`);
      }
      await sleep(20);
    }
  });
  await reconnect;
  await Promise.all(messages);
  while (served.size < victims.length && ms() - killedAt < deadline) await sleep(10);
  const times = [...served.values()].map((t) => t - killedAt);
  const invokes = [...firstInvoke.values()].map((t) => t - killedAt);
  const { rows } = await c.client!.query(
    `SELECT count(*) FILTER (WHERE l.owner = $2) AS taken, avg(${LAST_SEQUENCE}) AS records FROM leases l JOIN sessions s USING (session_id) WHERE l.session_id = ANY($1)`,
    [victims, `bench-node-${survivor.index}`],
  );
  const r: FailoverResult = {
    leaseMs: cfg.leaseMs,
    sessions: victims.length,
    hostReconnectedMs: hostReconnected,
    firstAcceptedMs: firstAccepted,
    firstInvokeMs: invokes.length ? Math.min(...invokes) : NaN,
    firstServedMs: times.length ? Math.min(...times) : NaN,
    allServedMs: times.length === victims.length ? Math.max(...times) : NaN,
    served: served.size,
    attempts,
    takenOver: Number(rows[0].taken),
    recordsPerSession: Number(rows[0].records),
    errors,
  };
  log(`  nodes: failover: first call served ${round(r.firstServedMs, 0)} ms after the kill, all ${r.served}/${r.sessions} by ${round(r.allServedMs, 0)} ms`);
  return r;
}

export interface OutageResult {
  downMs: number;
  /** ms from `pg_ctl stop -m immediate`. */
  first503Ms: number;
  /** ms from the first 503 answered to the first success answered (a request sent after that 503). */
  first503ToSuccessMs: number;
  /** ms from PostgreSQL accepting connections again (`pg_ctl start -w` returned) to that success. */
  backToSuccessMs: number;
  /** How long `pg_ctl stop -m immediate` and `pg_ctl start -w` took (the start: crash recovery until it accepts connections). */
  stopMs: number;
  startMs: number;
  /** The longest any request sent while PostgreSQL was down took to be answered. */
  longestDuringMs: number;
  /** Statuses answered to requests sent after the stop and before the first success: status → count. */
  statuses: Record<string, number>;
  requests: number;
  /** Calls the loaded sessions' host answered while PostgreSQL was down, and after it was back. */
  callsDuring: number;
  callsAfter: number;
  clients: number;
  errors: string[];
}

/**
 * PostgreSQL itself restarted under load, as clients see it (issue 28): the 1-node configuration
 * runs its turns load, `clients` HTTP clients send messages (`wait: true`) to sessions of their own
 * on that node, one after the other 20 ms apart, then PostgreSQL is stopped with
 * `pg_ctl -m immediate` (a crash: every backend ends at once, recovery replays the WAL at start),
 * kept down `downMs` and started again. Figures: stop → first 503, first 503 → first success, and
 * the longest request while it was down (none may hang).
 */
async function outage(c: Config, cluster: PgCluster, cfg: NodesConfig, log: (s: string) => void): Promise<OutageResult> {
  const node = c.nodes[0]!;
  const clients = 4;
  const errors: string[] = [];
  // One session per client: a scripted model answering every message with one text (no tool).
  const probes = await Promise.all(
    Array.from({ length: clients }, async () => {
      const r = await api(node.url, "POST", "/v1/sessions", { model: { provider: "scripted", script: Array.from({ length: 2000 }, () => ({ text: "ok" })) }, tools: [] });
      if (r.status !== 201) throw new Error(`create a client's session: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.id as string;
    }),
  );
  const load = c.loads.turns ?? c.loads.calls;
  if (load) resume(load);
  const host = c.hosts[0]!;
  const answers: Array<{ sent: number; done: number; status: number }> = [];
  let running = true;
  const loops = probes.map(async (id, k) => {
    while (running) {
      const sent = ms();
      let status = 0;
      try {
        const res = await fetch(`${node.url}/v1/sessions/${id}/messages`, {
          method: "POST",
          headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
          body: JSON.stringify({ text: `probe ${k}`, wait: true }),
          signal: AbortSignal.timeout(30_000),
        });
        status = res.status;
        const body = await res.text();
        if (status !== 200 && status !== 503 && errors.length < 5) errors.push(`${status}: ${body.slice(0, 200)}`);
      } catch (e) {
        if (errors.length < 5) errors.push(`request: ${e instanceof Error ? e.message : String(e)}`);
      }
      answers.push({ sent, done: ms(), status });
      await sleep(20);
    }
  });
  await sleep(1000);
  log(`  nodes: outage: pg_ctl stop -m immediate under load, down ${cfg.outageDownMs} ms`);
  const callsAtStop = host.answered;
  const stopAt = ms();
  const { stopMs, startMs } = await cluster.restart("immediate", cfg.outageDownMs);
  const backAt = ms();
  const callsAtBack = host.answered;
  const firstSuccess = () => {
    const first503 = answers.find((a) => a.sent >= stopAt && a.status === 503);
    return first503 && answers.find((a) => a.sent >= first503.done && a.status === 200);
  };
  const deadline = backAt + 30_000;
  while (firstSuccess() === undefined && ms() < deadline) await sleep(20);
  await sleep(1000);
  running = false;
  await Promise.all(loops);
  const callsAfter = host.answered - callsAtBack;
  if (load) pause(load);
  const first503 = answers.find((a) => a.sent >= stopAt && a.status === 503);
  const success = firstSuccess();
  const statuses: Record<string, number> = {};
  for (const a of answers) if (a.sent >= stopAt && (success === undefined || a.sent < success.sent)) statuses[String(a.status)] = (statuses[String(a.status)] ?? 0) + 1;
  const during = answers.filter((a) => a.sent >= stopAt && a.sent < backAt).map((a) => a.done - a.sent);
  const r: OutageResult = {
    downMs: cfg.outageDownMs,
    first503Ms: first503 === undefined ? NaN : first503.done - stopAt,
    first503ToSuccessMs: first503 === undefined || success === undefined ? NaN : success.done - first503.done,
    backToSuccessMs: success === undefined ? NaN : success.done - backAt,
    stopMs,
    startMs,
    longestDuringMs: during.length ? Math.max(...during) : NaN,
    statuses,
    requests: answers.length,
    callsDuring: callsAtBack - callsAtStop,
    callsAfter,
    clients,
    errors,
  };
  log(`  nodes: outage: first 503 ${round(r.first503Ms, 0)} ms after the stop, first success ${round(r.first503ToSuccessMs, 0)} ms after it (${round(r.backToSuccessMs, 0)} ms after PostgreSQL was back)`);
  return r;
}

/** A PostgreSQL server of the run, and its postmaster (whose CPU is counted). */
interface Server {
  cluster: PgCluster;
  postmaster: number | undefined;
}

async function startServer(isDurable: boolean): Promise<Server> {
  const cluster = await startPgCluster({ durable: isDurable });
  return { cluster, postmaster: postmasterOf(Number(new URL(cluster.url).port)) };
}

/** The outage's own durable server and PostgreSQL node, under a turns load of `cfg.sessions` sessions. */
async function outageRun(cfg: NodesConfig, from: "dist" | "source", runtimeDir: string, log: (s: string) => void): Promise<OutageResult> {
  const server = await startServer(cfg.durable);
  let c: Config | undefined;
  try {
    c = await startConfig(server, durable(1), cfg, from, runtimeDir, 0);
    c.loads.turns = await startLoad(c, "turns", cfg);
    return await outage(c, server.cluster, cfg, log);
  } finally {
    if (c) {
      await stopConfig(c);
      await c.client?.end().catch(() => {});
    }
    await server.cluster.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// The report

function runtimeDescription(runtimeDir: string, from: "dist" | "source"): string {
  let where = runtimeDir === join(REPO, "runtime") ? "this repository's runtime" : `the runtime in ${runtimeDir}`;
  try {
    const commitFile = join(runtimeDir, "..", "COMMIT");
    if (existsSync(commitFile)) where += ` (commit ${readFileSync(commitFile, "utf8").trim().slice(0, 7)}, per its COMMIT file)`;
    else {
      const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: runtimeDir }).toString().trim();
      const dirty = execFileSync("git", ["status", "--porcelain", "--", "src"], { cwd: runtimeDir }).toString().trim();
      where += ` at commit ${head}${dirty ? ` with ${dirty.split("\n").length} uncommitted change(s) under runtime/src` : ", runtime/src clean"}`;
    }
  } catch {}
  return `${where}, ${from === "dist" ? "its built dist/" : "its TypeScript sources (tsx)"}`;
}

const median = (xs: number[]) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);

function throughputSection(id: string, drive: Drive, loads: Map<string, Load>, xacts: Map<string, number>, cfg: NodesConfig): Section {
  const title =
    drive === "calls"
      ? `${id}. Tool calls/s at ${cfg.sessions} sessions, calls only (each node drives Dispatcher.start as §2; one host per node in the bench process)`
      : `${id}. Tool calls/s at ${cfg.sessions} sessions through real turns (scripted model, one tool call per step; one host per node in the bench process)`;
  const s: Section = { id, title, figures: [], notes: [] };
  const measured = (p: Plan) => {
    const l = loads.get(nameOf(p));
    return l === undefined || l.seconds === 0 ? undefined : l;
  };
  const rate = (p: Plan) => {
    const l = measured(p);
    return l === undefined ? NaN : l.calls / l.seconds;
  };
  // Cores used over the measured windows: the node processes, the PostgreSQL server, the bench's hosts.
  const coresOf = (p: Plan) => {
    const l = measured(p);
    if (l === undefined) return { node: NaN, pg: NaN, bench: NaN };
    return { node: sum(l.nodeCpu) / l.seconds, pg: p.journal === "postgres" ? l.pgCpu / l.seconds : 0, bench: l.benchCpu / l.seconds };
  };
  /** µs of CPU per call of the node processes and (PostgreSQL) the server: the journal's whole cost, hosts left out. */
  const journalUs = (p: Plan) => {
    const c = coresOf(p);
    return ((c.node + c.pg) / rate(p)) * 1e6;
  };
  for (const p of planOf(cfg)) {
    const { journal: j, count: n } = p;
    const name = nameOf(p);
    const l = measured(p);
    const perS = rate(p);
    let base: { name: string; value: number } | undefined;
    let goal: Figure["goal"];
    if (p.fsyncOff) base = { name: "1 node, fsync on", value: round(rate(durable(1)), 0) };
    else if (j === "postgres" && n === 1) {
      base = { name: "SQLite node", value: round(rate(SQLITE), 0) };
      goal = { text: "PostgreSQL single node ≥ 50 % of the SQLite node", pass: perS >= 0.5 * rate(SQLITE) };
    } else if (j === "postgres" && n > 1) {
      const prev = rate(durable(n - 1));
      base = { name: `${n - 1} node${n > 2 ? "s" : ""}`, value: round(prev, 0) };
      goal = n === 2 ? { text: "2 nodes ≥ 1.5× one PostgreSQL node", pass: perS >= 1.5 * prev } : { text: `${n} nodes no slower than ${n - 1}`, pass: perS >= prev };
    }
    s.figures.push(figure(`${name}: calls/s`, round(perS, 0), "calls/s", base, goal));
    if (l === undefined) {
      s.notes.push(`${name}: not measured (see the failures below); its goal MISSes`);
      continue;
    }
    const { node: nodeCores, pg: pgCores, bench: benchCores } = coresOf(p);
    const cores = (x: number) => x / l.seconds;
    const ours = nodeCores + pgCores + benchCores;
    const others = cores(l.machineBusy) - ours;
    // Issue 28: what a call costs on PostgreSQL, all of it (node + server), against the SQLite node's process.
    if (j === "postgres" && n === 1) {
      const sqlite = journalUs(SQLITE);
      const us = journalUs(p);
      s.figures.push(
        figure(`${name}: CPU per call, node + PostgreSQL`, round(us, 0), "µs", { name: "SQLite node's", value: round(sqlite, 0) }, p.fsyncOff ? undefined : { text: "CPU per call (node + PostgreSQL) ≤ 2× the SQLite node's", pass: us <= 2 * sqlite }),
      );
    }
    // A ratio of calls/s says little without the cores each configuration had: printed side by side.
    if (j === "postgres" && n === 2 && !p.fsyncOff) {
      const one = coresOf(durable(1));
      s.figures.push(figure(`${name}: cores used (nodes + PostgreSQL + hosts)`, round(ours, 2), "cores", { name: "1 node", value: round(one.node + one.pg + one.bench, 2) }));
    }
    s.figures.push(figure(`${name}: journal records per call`, round(l.records / l.calls, 2), "records"));
    s.figures.push(figure(`${name}: journal transactions per call`, round(l.transactions / l.calls, 3), "tx"));
    if (j === "postgres") s.figures.push(figure(`${name}: PostgreSQL write transactions per call`, round(l.pgXids / l.calls, 3), "tx"));
    s.figures.push(figure(`${name}: CPU of the node process${n > 1 ? "es" : ""}`, round(nodeCores, 2), "cores"));
    if (j === "postgres") s.figures.push(figure(`${name}: CPU of the PostgreSQL server`, round(pgCores, 2), "cores"));
    s.figures.push(figure(`${name}: CPU of the bench process (hosts)`, round(benchCores, 2), "cores"));
    s.figures.push(figure(`${name}: machine busy, every process`, round(cores(l.machineBusy), 2), "cores"));
    // Every core of the machine spent on these processes alone would serve at most this many calls/s.
    s.figures.push(figure(`${name}: CPU per call, nodes + PostgreSQL + hosts`, round((ours / perS) * 1e6, 0), "µs"));
    s.figures.push(figure(`${name}: ceiling if they had all ${availableParallelism()} cores`, round((availableParallelism() * perS) / ours, 0), "calls/s", { name: "measured", value: round(perS, 0) }));
    const commitMs = (1000 * l.seconds * n) / l.transactions;
    if (j === "postgres") s.figures.push(figure(`${name}: commit interval per node`, round(commitMs, 2), "ms", { name: "SELECT 1 round trip p50", value: round(median(l.rtts), 2) }));
    const us = (c: number) => round((c / perS) * 1e6, 0);
    s.notes.push(
      `${name}: ${l.calls} calls in ${l.blocks.length} blocks, ${round(l.seconds, 2)} s measured; blocks min / median / max ${round(Math.min(...l.blocks), 0)} / ${round(median(l.blocks), 0)} / ${round(Math.max(...l.blocks), 0)} calls/s; ` +
        `per node ${l.perNodeCalls.map((x) => round(x / l.seconds, 0)).join(" / ")} calls/s; CPU µs per call: nodes ${us(nodeCores)} (${l.nodeCpu.map((x) => round(cores(x), 2)).join(" + ")} cores)` +
        (j === "postgres" ? `, PostgreSQL ${us(pgCores)}` : "") +
        `, bench/hosts ${us(benchCores)}; machine busy ${round(cores(l.machineBusy), 2)} of ${availableParallelism()} cores, of which other tenants' processes ${round(others, 2)} (steal ${round(cores(l.machineSteal), 2)}); ` +
        `journal commits ${l.perNodeTx.map((x) => round(x / l.seconds, 0)).join(" / ")} per s per node (one every ${round(commitMs, 2)} ms), ${round(l.records / l.transactions, 1)} records each` +
        (j === "postgres" ? `; rows per call counted by the database (Σ each session's last journal sequence) ${round(l.pgRows / l.calls, 2)}` : "") +
        (j === "postgres" && drive === "calls" ? `; pg_stat_database xact_commit per call over the whole run ${round(xacts.get(name) ?? NaN, 3)}` : "") +
        `; creating the ${cfg.sessions} sessions took ${round(l.createMs, 0)} ms` +
        (l.failures.length ? `; FAILURES: ${l.failures.join("; ")}` : ""),
    );
  }
  if (drive === "calls") {
    s.notes.push(
      "calls only: each node process runs section 2's driver (node-child.ts): Dispatcher.start at activation 0, the next call on a session as soon as its tool.finished is committed; no model turn; the host answers every invoke with one finish. Records per call: tool.call_started, tool.result, tool.finished",
      `PostgreSQL write transactions per call: the cluster's next transaction id (pg_snapshot_xmax(pg_current_snapshot())) over the measured windows ÷ calls: every transaction that wrote, in any database, gets one at once — the measured configuration's journal commits, plus the lease renewals of every running PostgreSQL node (${sum(cfg.nodeCounts)} nodes × ${round(3000 / cfg.leaseMs, 1)} a second at BRAIN_LEASE_MS ${cfg.leaseMs}). xact_commit per call over the whole run: pg_stat_database's delta for the configuration's database from the start of its load to after its nodes ended (a backend flushes its counters when it ends) ÷ every call answered for it (both drives; for 2 nodes the failover too); it also counts what the nodes do while their load is paused (lease renewals, credential refreshes and takeover scans, ~5 a second per node) and this bench's queries, so it reads high`,
    );
  } else {
    s.notes.push(`real turns: each session gets one message; its scripted model has ${cfg.turnSteps} steps of one tool call each, so the turn lasts the whole run; after each call's result the Agentloop waits the 5 ms wake batch (LIMITS.wakeBatchMs) before the next model step, so ${cfg.sessions} sessions cannot exceed ${round((cfg.sessions * 1000) / 5, 0)} calls/s in this mode. Records per call include the model step's (model.request, model.response)`);
  }
  s.notes.push(
    `method: every configuration's nodes run at once (idle ones only renew their leases); each load (configuration × drive) first runs ${cfg.warmupRoundMs} ms unmeasured, then the load moves from one configuration and drive to the next in blocks (${cfg.blocks} blocks each, in a rotating order: the hosts hold a paused load's invokes, so each of its sessions waits on an open call): ${cfg.warmupMs} ms to reach its steady state, then ${cfg.blockMs} ms measured. Load changes of the shared machine fall on every configuration alike. Calls counted at the hosts (invokes answered); transactions from the nodes' journal store counters; commit interval = 1 / one node's commits per second (a commit is one prepared statement holding the fence, the journal rows and the heads; a node has two writer connections, each with one batch in flight at a time; a batch of 96 or more sessions is dealt out between them, so up to 64 sessions per node commit as one batch at a time)`,
    "CPU from /proc/<pid>/stat (utime + stime, all threads) over the measured windows: each node process, the PostgreSQL server (postmaster, its live children and the ones it reaped; the idle configurations' lease renewals included), this process (hosts, HTTP clients, probes); machine busy from /proc/stat (user+nice+system+irq+softirq of every core; 'other tenants' = busy − ours: the shared machine's other processes). Ceiling = cores ÷ CPU per call: what these processes could serve with the whole machine",
  );
  return s;
}

function failuresSection(id: string, f: FailoverResult | undefined, o: OutageResult | undefined, cfg: NodesConfig): Section {
  const s: Section = {
    id,
    title: `${id}. Failures: SIGKILL of one of 2 PostgreSQL nodes while its sessions run turns (failover, BRAIN_LEASE_MS ${cfg.leaseMs}); PostgreSQL itself stopped for ${cfg.outageDownMs} ms under load (outage)`,
    figures: [],
    notes: [],
  };
  failoverFigures(s, f, cfg);
  if (cfg.outageDownMs > 0) outageFigures(s, o, cfg);
  return s;
}

function failoverFigures(s: Section, f: FailoverResult | undefined, cfg: NodesConfig): void {
  const goalText = `failover ≤ lease time + 1 s (${cfg.leaseMs + 1000} ms)`;
  if (f === undefined) {
    s.notes.push("failover not measured (see the failures in section 10)");
    s.figures.push(figure("SIGKILL → first call served on a taken-over session", NaN, "ms", { name: "lease", value: cfg.leaseMs }, { text: goalText, pass: false }));
    return;
  }
  s.figures.push(figure("SIGKILL → first call served on a taken-over session", round(f.firstServedMs, 0), "ms", { name: "lease", value: f.leaseMs }, { text: goalText, pass: f.firstServedMs <= f.leaseMs + 1000 }));
  s.figures.push(figure("SIGKILL → host reconnected to the survivor", round(f.hostReconnectedMs, 0), "ms"));
  s.figures.push(figure("SIGKILL → first message accepted (202) by the survivor", round(f.firstAcceptedMs, 0), "ms", { name: "lease", value: f.leaseMs }));
  s.figures.push(figure("SIGKILL → first invoke of a taken-over session", round(f.firstInvokeMs, 0), "ms"));
  s.figures.push(figure(`SIGKILL → every one of the ${f.sessions} sessions served a call`, round(f.allServedMs, 0), "ms", { name: "lease", value: f.leaseMs }));
  s.notes.push(
    `${f.sessions} sessions of the killed node, each mid-turn (open call, turn open), ~${round(f.recordsPerSession, 0)} journal records each; ${f.takenOver} of them leased to the survivor afterwards; ${f.served} served a call; ${f.attempts} message attempts in all` + (f.errors.length ? `; first errors: ${f.errors.join(" | ")}` : ""),
    `failover method: after the blocks, the 2-node configuration's turns run alone for ${cfg.failoverAfterMs} ms; then SIGKILL node 1; its host reconnects to node 0 at once; a new message is sent through node 0 to each of node 1's turn sessions (retried every 20 ms until 202: node 0 forwards to the dead owner and waits until the owner's lease has expired and it takes the session over, ending its open call unknown and its turn failed); the figure is the first \`committed\` the host receives for the finish of a call of one of those sessions. Node 0 keeps running its own turns meanwhile. A node renews its lease every third of the lease time, so the lease of a node killed at a random moment runs out between 2/3 and all of the lease time after the kill`,
  );
}

function outageFigures(s: Section, o: OutageResult | undefined, cfg: NodesConfig): void {
  if (o === undefined) {
    s.notes.push("outage not measured (see the failures in section 10)");
    s.figures.push(figure(`PostgreSQL down ${cfg.outageDownMs} ms: first 503 → first success`, NaN, "ms"));
    return;
  }
  s.figures.push(figure(`PostgreSQL down ${o.downMs} ms: first 503 → first success`, round(o.first503ToSuccessMs, 0), "ms", { name: "down", value: o.downMs }));
  s.figures.push(figure("PostgreSQL stopped → first 503 answered", round(o.first503Ms, 0), "ms"));
  s.figures.push(figure("pg_ctl start -w (crash recovery until it accepts connections)", round(o.startMs, 0), "ms"));
  s.figures.push(figure("PostgreSQL accepting again → first success", round(o.backToSuccessMs, 0), "ms"));
  s.figures.push(figure("longest answer to a request sent while PostgreSQL was down", round(o.longestDuringMs, 0), "ms"));
  s.notes.push(
    `outage: ${o.clients} clients, ${o.requests} requests in all; answers to the requests sent from the stop until the first success: ${Object.entries(o.statuses).map(([k, n]) => `${k === "0" ? "no answer" : k} × ${n}`).join(", ")}; the loaded sessions' host answered ${o.callsDuring} invokes while PostgreSQL was down (calls sent before it stopped) and ${o.callsAfter} after (a turn whose write failed ends failed; it is not resumed)` +
      (o.errors.length ? `; first errors: ${o.errors.join(" | ")}` : ""),
    `outage method: after the failover, the 1-node configuration's turns run (64 sessions calling its host) while ${o.clients} HTTP clients each send a message with wait: true to a session of their own on that node (scripted text answers, no tool), one after the other, 20 ms apart; after 1 s PostgreSQL is stopped with pg_ctl -m immediate (every backend ends at once; the start replays the WAL), kept down ${o.downMs} ms and started again (pg_ctl start -w; pg_ctl stop took ${round(o.stopMs, 0)} ms). First success: the first 200 answered to a request sent after the first 503 was answered`,
  );
}

export async function nodesBench(cfg: NodesConfig, log: (s: string) => void, from: "dist" | "source"): Promise<Section[]> {
  const runtimeDir = process.env.BENCH_RUNTIME_DIR ?? join(REPO, "runtime");
  if (!existsSync(join(runtimeDir, from === "dist" ? "dist/index.js" : "src/index.ts"))) throw new Error(`no runtime ${from} in ${runtimeDir}`);
  log(`  nodes: starting PostgreSQL (runtime/test/helpers/pg-cluster.ts: ${cfg.durable ? "durable" : "fsync off"}${cfg.fsyncOff ? ", and a second server with fsync off" : ""})`);
  const servers: Server[] = [];
  const configs: Config[] = [];
  const loads: Load[] = [];
  const errors: string[] = [];
  const xacts = new Map<string, number>();
  let failover: FailoverResult | undefined;
  let down: OutageResult | undefined;
  const fail = (what: string, e: unknown, c?: Config) => {
    const msg = `${what}: ${e instanceof Error ? e.message : String(e)}${c ? ` [${said(c)}]` : ""}`.slice(0, 1500);
    errors.push(msg);
    log(`  nodes: FAILED ${msg.slice(0, 600)}`);
  };
  try {
    servers.push(await startServer(cfg.durable));
    if (cfg.fsyncOff) servers.push(await startServer(false));
    const serverOf = (p: Plan) => (p.journal === "sqlite" ? undefined : servers[p.fsyncOff ? 1 : 0]);
    const plan = planOf(cfg);
    log(`  nodes: starting ${plan.map(nameOf).join(", ")} (${sum(plan.map((p) => p.count))} node processes at once)`);
    const started = await Promise.allSettled(plan.map((p, i) => startConfig(serverOf(p), p, cfg, from, runtimeDir, i + 1)));
    started.forEach((s, i) => (s.status === "fulfilled" ? configs.push(s.value) : fail(nameOf(plan[i]!), s.reason)));
    log(`  nodes: up; creating the sessions`);
    // One configuration after the other: a burst of creations is what a PostgreSQL node handles worst.
    for (const c of configs) {
      for (const d of cfg.drives) {
        try {
          const l = await startLoad(c, d, cfg);
          c.loads[d] = l;
          loads.push(l);
        } catch (e) {
          fail(`${d}, ${c.name}: starting the load`, e, c);
        }
      }
      c.answeredStart = answered(c);
      if (c.client) c.xactStart = Number((await c.client.query("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")).rows[0].xact_commit);
    }
    log(`  nodes: ${loads.length} loads of ${cfg.sessions} sessions ready; each runs ${cfg.warmupRoundMs} ms unmeasured, then ${cfg.blocks} blocks of ${cfg.warmupMs} + ${cfg.blockMs} ms each, in turn`);
    // A fresh node's first thousands of calls run slower (V8 optimises the call path as it goes).
    for (const l of loads) {
      resume(l);
      await sleep(cfg.warmupRoundMs);
      pause(l);
    }
    for (let k = 0; k < cfg.blocks; k++) {
      for (let j = 0; j < loads.length; j++) {
        const l = loads[(j + k) % loads.length]!;
        if (l.failures.some((f) => f.startsWith("block"))) continue;
        try {
          await block(l, cfg);
        } catch (e) {
          l.failures.push(`block ${k + 1}: ${e instanceof Error ? e.message : String(e)} [${said(l.config)}]`);
        }
      }
      log(`  nodes: round ${k + 1}/${cfg.blocks}: ${loads.map((l) => `${l.drive} ${l.config.name} ${round(l.blocks[l.blocks.length - 1] ?? NaN, 0)}`).join(", ")} calls/s`);
    }
    for (const l of loads) {
      if (l.drive !== "turns") continue;
      const most = Math.max(0, ...l.config.hosts.flatMap((h) => l.ids.map((id) => h.perSession.get(id) ?? 0)));
      if (most >= cfg.turnSteps - 1) l.failures.push(`a session ran out of script (${cfg.turnSteps} steps): raise turnSteps, its later blocks undercount`);
    }
    // The calls-only loads end: driving stops, their waiting calls are answered, their sessions settle.
    for (const l of loads) {
      if (l.drive !== "calls") continue;
      await Promise.all(l.config.nodes.map((n) => n.request({ type: "stop-driving" }).catch(() => {})));
      resume(l);
    }
    const two = configs.find((c) => c.name === nameOf(durable(2)))?.loads.turns;
    if (two) {
      resume(two);
      await sleep(cfg.failoverAfterMs);
      try {
        failover = await failOver(two, cfg, log);
      } catch (e) {
        fail("failover", e, two.config);
      }
    }
  } finally {
    for (const c of configs) await stopConfig(c);
    // Whole-run transactions per call, read once the nodes' backends have ended (and flushed their counters).
    for (const c of configs) {
      if (!c.client) continue;
      try {
        for (let i = 0; i < 50; i++) {
          const { rows } = await c.client.query("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
          if (Number(rows[0].n) === 0) break;
          await sleep(50);
        }
        const end = Number((await c.client.query("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")).rows[0].xact_commit);
        xacts.set(c.name, (end - c.xactStart) / (answered(c) - c.answeredStart));
      } catch (e) {
        fail(`${c.name}: reading xact_commit`, e);
      }
      await c.client.end().catch(() => {});
    }
    for (const s of servers) await s.cluster.stop();
  }
  // The outage last, on a server and node of its own: stopping the shared server would end every
  // configuration's connections (and, being a crash, reset the statistics read above).
  if (cfg.outageDownMs > 0) {
    try {
      down = await outageRun(cfg, from, runtimeDir, log);
    } catch (e) {
      fail("outage", e);
    }
  }
  const byName = (d: Drive) => new Map(loads.filter((l) => l.drive === d).map((l) => [l.config.name, l]));
  const sections: Section[] = [];
  if (cfg.drives.includes("calls")) sections.push(throughputSection("10", "calls", byName("calls"), xacts, cfg));
  if (cfg.drives.includes("turns")) sections.push(throughputSection("11", "turns", byName("turns"), xacts, cfg));
  if (cfg.drives.includes("turns") && cfg.nodeCounts.includes(2)) sections.push(failuresSection("12", failover, down, cfg));
  sections[0]!.notes.unshift(
    `every runtime node is its own process (bench/src/node-child.ts: configFromEnv + startBrain, as brain serve), running ${runtimeDescription(runtimeDir, from)}; PostgreSQL ${pgVersion()} started by runtime/test/helpers/pg-cluster.ts ${cfg.durable ? "with its default durability (fsync on, synchronous_commit on: a commit returns once its WAL is on disk)" : "with fsync off (smoke size: the shape of the report, not its figures)"}${cfg.fsyncOff ? "; the configuration labelled fsync off runs on a second server with fsync=off (what earlier runs of this bench measured)" : ""}, one database per configuration, BRAIN_LEASE_MS ${cfg.leaseMs} on every PostgreSQL node; the SQLite node is the default journal (WAL, synchronous=NORMAL) in a temp dir. Hosts and load generators: this process`,
  );
  if (errors.length) sections[0]!.notes.push(`failures: ${errors.join(" || ")}`);
  return sections;
}

function pgVersion(): string {
  try {
    return execFileSync(join(pgBinDir()!, "postgres"), ["--version"]).toString().trim().replace(/^postgres \(PostgreSQL\) /, "");
  } catch {
    return "?";
  }
}
