// Issue 20, item 5: a crash loop. Three runtime nodes (real subprocesses) on one real PostgreSQL
// database with a short lease; hosts and HTTP clients keep sessions busy with tool calls while, round
// after round, a random node is SIGKILLed with calls in flight, its hosts reconnect to a survivor and
// it is started again. At the end every session is read back through the nodes and checked:
// - the journal is valid and gap-free, and reads the same through two different nodes;
// - every acknowledged record is there at its sequence with its content: hosts' `committed` frames
//   (events, results, finishes), 201 session ids, 202 message sequences;
// - nothing is dispatched twice: no callId reaches any host twice (across reconnects), and every
//   invoke matches a journaled tool.call_started;
// - every call started ends with exactly one tool.finished (ok / error / unknown), nothing of a call
//   follows its tool.finished, and the journal holds nothing a host did not send, nor anything twice;
// - turns do not overlap and end once; every session settles (idle, no open calls).
// BRAIN_CRASH_SEED=<n> repeats a run's choices (which node dies, host plans, routing); the seed is
// printed. A failure lists the violations and writes the whole evidence to a JSON file.
import { test } from "uvu";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { contract, placed } from "./helpers/contract.ts";
import { invalidFrames } from "./helpers/host.ts";
import { CrashHost, Rng } from "./helpers/crash-host.ts";
import { timedRequest } from "./helpers/timed-request.ts";
import { checkLedger, journalExcerpt } from "./verify/ledger.ts";
import type { SessionLedger } from "./verify/ledger.ts";
import { startPgCluster } from "./helpers/pg-cluster.ts";
import type { PgCluster } from "./helpers/pg-cluster.ts";
import { freshDatabase, kill9, killAll, queryRows as query, startNode } from "./helpers/nodes.ts";
import type { NodeProcess } from "./helpers/nodes.ts";

const TOKEN = "crash-operator-token-0001";
const LEASE_MS = 1000;
const ROUNDS = 6;
const SESSIONS_PER_NODE = 3;
const SEED = process.env.BRAIN_CRASH_SEED === undefined ? 20_05 : Number(process.env.BRAIN_CRASH_SEED);
const nodeEnv = { BRAIN_LEASE_MS: String(LEASE_MS), BRAIN_HOST_TIMEOUT_MS: "60000" };
const echo = contract("echo");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let cluster: PgCluster | undefined;

test.after(async () => {
  await killAll();
  await cluster?.stop();
});

/** One node position: the process running there now (undefined while it is dead), and all it ran. */
interface Slot {
  index: number;
  nodeId: string;
  node: NodeProcess | undefined;
  past: Array<{ nodeId: string; node: NodeProcess }>;
}

type SessionLoad = SessionLedger;

/** One request with the operator token (helpers/timed-request.ts). */
const http = (url: string, method: string, path: string, body?: unknown, timeoutMs?: number) => timedRequest(url, TOKEN, method, path, body, timeoutMs);

/** A script of turns: two calls, then one, then a text answer — long enough for the whole run (wake turns take steps too). */
function script(): unknown[] {
  const steps: unknown[] = [];
  for (let t = 0; steps.length < 450; t++) {
    steps.push({ toolCalls: [{ name: "echo", input: { t, c: "a" } }, { name: "echo", input: { t, c: "b" } }] });
    steps.push({ toolCalls: [{ name: "echo", input: { t, c: "c" } }] });
    steps.push({ text: `turn ${t} done` });
  }
  return steps;
}

test("crash loop: 3 nodes, SIGKILL a random node with calls in flight round after round; no acknowledged record lost, nothing dispatched twice", async () => {
  const started = Date.now();
  // The schedule (which node dies, how it comes back) comes from its own generator, so a seed repeats
  // it exactly; the load's choices (host plans, routing, pauses) also depend on timing.
  const plan = new Rng(SEED);
  const rand = new Rng(SEED ^ 0x5bd1e995);
  const comebacks = (["new id", "same id", "same id at once"] as const).flatMap((c) => [c, c]);
  for (let i = comebacks.length - 1; i > 0; i--) {
    const j = plan.int(0, i);
    [comebacks[i], comebacks[j]] = [comebacks[j]!, comebacks[i]!];
  }
  const schedule = comebacks.slice(0, ROUNDS).map((comeback) => ({ victim: plan.int(0, 2), comeback }));
  const log: string[] = [];
  const note = (s: string) => log.push(`+${((Date.now() - started) / 1000).toFixed(1)}s ${s}`);
  const violations: string[] = [];
  const violate = (s: string) => violations.push(s);
  const problems: string[] = [];
  note(`seed ${SEED}; schedule ${schedule.map((x) => `n${x.victim} (${x.comeback})`).join(", ")}`);

  cluster = await startPgCluster();
  const db = await freshDatabase(cluster.url, "crash_loop");
  let generation = 0;
  const slots: Slot[] = await Promise.all(
    [0, 1, 2].map(async (index) => {
      const nodeId = `n${index}-g0`;
      const node = await startNode(db, TOKEN, { ...nodeEnv, BRAIN_NODE_ID: nodeId });
      return { index, nodeId, node, past: [{ nodeId, node }] };
    }),
  );
  const live = () => slots.filter((s) => s.node !== undefined);
  const urlOf = (s: Slot) => s.node!.url;

  const hosts = new Map<string, CrashHost>();
  const sessions: SessionLoad[] = [];
  const httpStats = new Map<string, number>();
  const count = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

  async function newHost(hostId: string, slot: Slot): Promise<CrashHost> {
    const h = new CrashHost(hostId, `${hostId}-secret-crash-loop`, [echo], rand, (p) => problems.push(p));
    await h.connect({ url: urlOf(slot), token: TOKEN }, slot.index);
    hosts.set(hostId, h);
    return h;
  }

  async function newSession(host: CrashHost, slot: Slot): Promise<void> {
    const body = { model: { provider: "scripted", script: script() }, tools: [placed(echo, host.hostId)] };
    for (let attempt = 1; ; attempt++) {
      const r = await http(urlOf(slot), "POST", "/v1/sessions", body);
      if (r.status === 201) {
        sessions.push({ id: r.body.id, hostId: host.hostId, createdVia: slot.nodeId, messages: [], attempts: 0 });
        return;
      }
      if (attempt >= 5) throw new Error(`creating a session through ${slot.nodeId} failed: ${r.status} ${JSON.stringify(r.body)} ${r.error ?? ""}`);
      await sleep(300);
    }
  }

  // Load: a driver per session sends a message whenever its turn is over, through its host's node
  // mostly (a node that takes an idle session over runs it there, where its host is) or any live node.
  let stopping = false;
  const drivers: Promise<void>[] = [];
  function drive(s: SessionLoad): void {
    drivers.push(
      (async () => {
        while (!stopping) {
          const host = hosts.get(s.hostId)!;
          const nodes = live();
          if (host.node === undefined || nodes.length === 0) {
            await sleep(200);
            continue;
          }
          const mine = slots[host.node]!;
          const via = mine.node !== undefined && rand.chance(0.7) ? mine : rand.pick(nodes);
          const text = `${s.id} message ${++s.attempts}`;
          const url = urlOf(via);
          const r = await http(url, "POST", `/v1/sessions/${s.id}/messages`, { text });
          count(httpStats, r.status === 0 ? "network error" : `${r.status}${r.body?.error?.code ? ` ${r.body.error.code}` : ""}`);
          if (r.status === 202) {
            s.messages.push({ sequence: r.body.sequence, activation: r.body.activation, text, via: via.nodeId });
            await sleep(rand.int(200, 700));
          } else if (r.status === 409 || r.status === 503 || r.status === 0) {
            await sleep(300);
          } else {
            violate(`POST /v1/sessions/${s.id}/messages through ${via.nodeId}: unexpected ${r.status} ${JSON.stringify(r.body)}`);
            await sleep(500);
          }
        }
      })(),
    );
  }

  for (const slot of slots) {
    const h = await newHost(`h${slot.index}`, slot);
    for (let i = 0; i < SESSIONS_PER_NODE; i++) await newSession(h, slot);
  }
  sessions.forEach(drive);
  note(`${slots.length} nodes, ${hosts.size} hosts, ${sessions.length} sessions; load running`);
  await sleep(2000);

  let killedWithCalls = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const { victim: v, comeback } = schedule[round - 1]!;
    const victim = slots[v]!;
    // Kill while one of its hosts works on a call (it is the owner of that call's session).
    const onVictim = () => [...hosts.values()].filter((h) => h.node === victim.index);
    const until = Date.now() + 8000;
    while (Date.now() < until && !onVictim().some((h) => h.working.size > 0)) await sleep(20);
    const inFlight = onVictim().reduce((n, h) => n + h.working.size, 0);
    if (inFlight > 0) killedWithCalls++;
    const dead = victim.nodeId;
    const displaced = onVictim();
    await kill9(victim.node!.child);
    victim.node = undefined;
    note(`round ${round}: SIGKILL ${dead} with ${inFlight} call(s) in flight on ${displaced.map((h) => h.hostId).join(", ") || "no host"}; back with ${comeback}`);
    // Its hosts see the connection drop.
    const dropUntil = Date.now() + 10_000;
    while (Date.now() < dropUntil && displaced.some((h) => h.connected)) await sleep(20);
    // How it comes back: a new process under a new id once its open work is taken over, under its old
    // id once taken over, or under its old id at once (racing the survivors' takeover).
    const restart = async () => {
      const nodeId = comeback === "new id" ? `n${victim.index}-g${++generation}` : dead;
      const node = await startNode(db, TOKEN, { ...nodeEnv, BRAIN_NODE_ID: nodeId });
      victim.node = node;
      victim.nodeId = nodeId;
      victim.past.push({ nodeId, node });
      note(`round ${round}: restarted as ${nodeId}`);
    };
    // A new id cannot race the takeover: that process starts while the survivors take over.
    const restarting = comeback === "new id" ? restart() : undefined;
    restarting?.catch(() => {}); // awaited below; a failure surfaces there
    if (comeback === "same id at once") await restart();
    else {
      // The survivors take its sessions with open work over (after the lease); wait for that, with no bound on how fast.
      const takeoverUntil = Date.now() + 30_000;
      for (;;) {
        const open = await query(db, `SELECT count(*)::int AS n FROM sessions s JOIN leases l USING (session_id) WHERE l.owner = $1 AND NOT s.deleted AND (s.open_calls > 0 OR s.open_model_requests > 0 OR s.turn_open)`, [dead]);
        if (open[0].n === 0) break;
        if (Date.now() > takeoverUntil) {
          violate(`round ${round}: ${open[0].n} session(s) with open work of the dead ${dead} not taken over in 30 s`);
          break;
        }
        await sleep(100);
      }
      note(`round ${round}: ${dead}'s open work taken over`);
    }
    // Each displaced host reconnects to the live node that owns most of its sessions now.
    for (const h of displaced) {
      const mine = sessions.filter((s) => s.hostId === h.hostId).map((s) => s.id);
      const owners = await query(db, "SELECT owner, count(*)::int AS n FROM leases WHERE session_id = ANY($1) GROUP BY owner ORDER BY n DESC, owner", [mine]);
      const liveIds = new Map(live().map((s) => [s.nodeId, s]));
      const best = owners.map((o) => liveIds.get(o.owner)).find((s) => s !== undefined) ?? rand.pick(live());
      for (let attempt = 1; ; attempt++) {
        try {
          await h.connect({ url: urlOf(best), token: TOKEN }, best.index);
          break;
        } catch (e) {
          if (attempt >= 5) throw e;
          await sleep(300);
        }
      }
      note(`round ${round}: ${h.hostId} reconnected to ${best.nodeId}`);
    }
    if (restarting !== undefined) await restarting;
    else if (victim.node === undefined) await restart();
    // New work placed on the restarted node: a host connected to it and sessions created through it.
    const h = await newHost(`h${victim.index}-r${round}`, victim);
    const before = sessions.length;
    for (let i = 0; i < 2; i++) await newSession(h, victim);
    sessions.slice(before).forEach(drive);
    await sleep(2000);
  }

  // Settle: no new messages; the hosts go on serving until every session is idle with no open call.
  await sleep(1000);
  stopping = true;
  await Promise.all(drivers);
  note(`load stopped; ${sessions.length} sessions; settling`);
  const settleUntil = Date.now() + 60_000;
  const unsettled = new Map<string, string>();
  for (const s of sessions) unsettled.set(s.id, "not read yet");
  while (unsettled.size > 0 && Date.now() < settleUntil) {
    for (const id of [...unsettled.keys()]) {
      const r = await http(urlOf(rand.pick(live())), "GET", `/v1/sessions/${id}`);
      if (r.status === 200 && r.body.status !== "running" && r.body.openCalls.length === 0) unsettled.delete(id);
      else unsettled.set(id, r.status === 200 ? `status ${r.body.status}, open calls ${JSON.stringify(r.body.openCalls)}` : `${r.status} ${JSON.stringify(r.body)} ${r.error ?? ""}`);
    }
    if (unsettled.size > 0) await sleep(250);
  }
  for (const [id, why] of unsettled) violate(`session ${id} did not settle in 60 s: ${why}`);
  await Promise.all([...hosts.values()].map((h) => h.idle()));
  note("settled; checking");

  // Every session, the acknowledged ones and any the listing shows (a creation whose 201 was lost).
  const listing = await http(urlOf(live()[0]!), "GET", "/v1/sessions?limit=1000");
  if (listing.status !== 200) throw new Error(`listing sessions: ${listing.status} ${JSON.stringify(listing.body)}`);
  const listed = new Set<string>(listing.body.sessions.map((s: { id: string }) => s.id));
  for (const s of sessions) if (!listed.has(s.id)) violate(`session ${s.id} (201 from ${s.createdVia}) is not listed`);
  const ids = [...new Set([...sessions.map((s) => s.id), ...listed])];

  const allSent = [...hosts.values()].flatMap((h) => h.sent);
  const allInvokes = [...hosts.values()].flatMap((h) => h.invokes);
  const journals = new Map<string, JournalRecord[]>();
  for (const id of ids) {
    const a = rand.pick(live());
    const b = rand.pick(live().length > 1 ? live().filter((s) => s !== a) : live());
    const ra = await http(urlOf(a), "GET", `/v1/sessions/${id}/events`);
    if (ra.status !== 200) {
      violate(`GET events of ${id} through ${a.nodeId}: ${ra.status} ${JSON.stringify(ra.body)} ${ra.error ?? ""}`);
      continue;
    }
    const all = ra.body.records as JournalRecord[];
    journals.set(id, all);
    const where = `session ${id}`;
    const rb = await http(urlOf(b), "GET", `/v1/sessions/${id}/events`);
    if (rb.status !== 200 || !isDeepStrictEqual(rb.body.records, all)) violate(`${where}: the journal read through ${b.nodeId} differs from the one through ${a.nodeId} (${rb.status})`);
    if (ra.body.lastSequence !== all.length) violate(`${where}: lastSequence ${ra.body.lastSequence} but ${all.length} records`);
    // The same as the database's own rows (what a node serves is what is stored), and a settled head.
    const rows = await query(db, "SELECT sequence, at, type, data FROM journal WHERE session_id = $1 ORDER BY sequence", [id]);
    const stored = rows.map((x) => ({ sessionId: id, sequence: x.sequence, at: Number(x.at), type: x.type, data: JSON.parse(x.data) }));
    if (!isDeepStrictEqual(stored, all.map((r) => ({ sessionId: r.sessionId, sequence: r.sequence, at: r.at, type: r.type, data: r.data })))) {
      const i = stored.findIndex((x, k) => !isDeepStrictEqual(x, all[k]));
      violate(`${where}: the records served differ from the database's rows (${all.length} served, ${stored.length} stored; first difference at index ${i}: ${JSON.stringify(all[i])} vs ${JSON.stringify(stored[i])})`);
    }
    // A row left saying "open work" by a call ended outside a turn is settled by its owner a second
    // after its last commit (journal/postgres.ts headDue): waited for, up to 5 s.
    const settledRow = (h: { last_sequence: number; open_calls: number; open_model_requests: number; turn_open: boolean } | undefined) => h !== undefined && h.last_sequence === all.length && h.open_calls === 0 && h.open_model_requests === 0 && h.turn_open === false;
    let head: Parameters<typeof settledRow>[0];
    for (const until = Date.now() + 5000; ; await sleep(100)) {
      head = (await query(db, "SELECT last_sequence, open_calls, open_model_requests, turn_open FROM sessions WHERE session_id = $1", [id]))[0];
      if (settledRow(head) || Date.now() > until) break;
    }
    if (!settledRow(head)) violate(`${where}: its sessions row is not settled at ${all.length} within 5 s: ${JSON.stringify(head)}`);
  }
  const ledger = checkLedger({ journals, sessions, sent: allSent, invokes: allInvokes });
  violations.push(...ledger.violations);
  const statusCount = ledger.ends;
  const callsStarted = ledger.callsStarted;
  if (invalidFrames.length > 0) violate(`frames off the contract: ${JSON.stringify(invalidFrames.slice(0, 5))}`);
  for (const p of problems) violate(`host: ${p}`);

  const acks = allSent.filter((x) => x.answer?.type === "committed").length;
  const rejected = new Map<string, number>();
  for (const x of allSent) if (x.answer?.type === "rejected") count(rejected, x.answer.code);
  const summary = [
    `seed ${SEED}, ${ROUNDS} rounds in ${((Date.now() - started) / 1000).toFixed(1)} s, ${killedWithCalls} kill(s) with calls in flight`,
    `${ids.length} sessions, ${callsStarted} calls started, ${allInvokes.length} invokes, ${acks} host acks, ${allSent.filter((x) => x.answer?.type === "lost").length} host frames unanswered (connection lost)`,
    `messages acknowledged: ${sessions.reduce((n, s) => n + s.messages.length, 0)}; HTTP answers: ${JSON.stringify(Object.fromEntries(httpStats))}`,
    `call ends: ${JSON.stringify(Object.fromEntries(statusCount))}; host frames rejected: ${JSON.stringify(Object.fromEntries(rejected))}`,
  ];
  note(summary.join("\n  "));
  if (violations.length > 0) {
    const file = join(tmpdir(), `brain-crash-loop-${process.pid}.json`);
    const nodes = slots.flatMap((s) => s.past.map((p, i) => ({ slot: s.index, process: i + 1, nodeId: p.nodeId, output: p.node.output() })));
    writeFileSync(file, JSON.stringify({ seed: SEED, violations, log, sessions, sent: allSent, invokes: allInvokes, journals: Object.fromEntries(journals), nodes }, null, 1));
    const shown = violations.slice(0, 20).map((v, i) => `  ${i + 1}. ${v}${i < 5 ? journalExcerpt(v, journals) : ""}`);
    throw new Error(`${violations.length} violation(s):\n${shown.join("\n")}\n${log.join("\n")}\nfull evidence (journals, frames, node output): ${file}`);
  }
  console.log(log.join("\n"));
  // Sanity: the run did what it is for (calls cut by the kills, and many acknowledged records).
  if (killedWithCalls === 0) throw new Error(`no kill found calls in flight:\n${log.join("\n")}`);
  if (acks < 50) throw new Error(`only ${acks} host acknowledgements: the load did not run:\n${log.join("\n")}`);
  await Promise.all([...hosts.values()].map((h) => h.close()));
});

test.run();
