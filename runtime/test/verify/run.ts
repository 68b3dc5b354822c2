// The verification runner (issue 32): a seeded workload of API-key tenants whose sessions call host
// tools (emit, return a result, finish, fail; some with a deadline they overrun; some turns
// cancelled), run against real runtime processes while faults are injected into them, then checked
// against what every client was told. Faults: SIGKILL of a node (restarted), SIGSTOP/SIGCONT of a
// node, a host connection cut without a close frame (the host reconnects under the same id), and,
// on PostgreSQL, a restart of the database server. The seed fixes the workload's shape and the fault
// schedule; what happens inside depends on timing, so a seed replays the run, not every interleaving.
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { contract, placed } from "../helpers/contract.ts";
import { CrashHost, Rng } from "../helpers/crash-host.ts";
import { invalidFrames } from "../helpers/host.ts";
import { timedRequest } from "../helpers/timed-request.ts";
import { startFleet } from "./fleet.ts";
import type { Fleet, Slot } from "./fleet.ts";
import { checkLedger, journalExcerpt } from "./ledger.ts";
import type { SessionLedger } from "./ledger.ts";

export const FAULT_KINDS = ["kill", "pause", "drop-host", "db-restart"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface VerifyOptions {
  seed: number;
  /** How long faults are injected (the settling and the checks come after). */
  seconds: number;
  /** 0: one node on SQLite; N: N nodes on one PostgreSQL database. */
  nodes: number;
  /** Which faults to inject (default: all that apply; `db-restart` needs nodes > 0). */
  faults?: FaultKind[];
  tenants?: number;
  sessionsPerHost?: number;
  log?: (line: string) => void;
}

export interface VerifyReport {
  seed: number;
  ms: number;
  replay: string;
  faults: Record<string, number>;
  /** Kills and pauses that found calls in flight on the node. */
  faultsWithCallsInFlight: number;
  sessions: number;
  records: number;
  callsStarted: number;
  invokes: number;
  hostAcks: number;
  messagesAcknowledged: number;
  cancels: number;
  ends: Record<string, number>;
  http: Record<string, number>;
  violations: string[];
  /** The whole evidence of a failed run (journals, frames, node output). */
  evidenceFile?: string;
  log: string[];
}

const TOKEN = "verify-operator-token-0001";
const LEASE_MS = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const echo = contract("echo");

const http = timedRequest;

/** A script of turns: two calls, then one, then a text answer; long enough for any run. */
function script(turns: number): unknown[] {
  const steps: unknown[] = [];
  for (let t = 0; t < turns; t++) {
    steps.push({ toolCalls: [{ name: "echo", input: { t, c: "a" } }, { name: "echo", input: { t, c: "b" } }] });
    steps.push({ toolCalls: [{ name: "echo", input: { t, c: "c" } }] });
    steps.push({ text: `turn ${t} done` });
  }
  return steps;
}

interface Tenant {
  name: string;
  keyId: string;
  token: string;
}

interface Load extends SessionLedger {
  tenant: Tenant;
}

export async function verify(opts: VerifyOptions): Promise<VerifyReport> {
  const started = Date.now();
  const log: string[] = [];
  const note = (s: string) => {
    const line = `+${((Date.now() - started) / 1000).toFixed(1)}s ${s}`;
    log.push(line);
    opts.log?.(line);
  };
  const replay = `npm run verify -- --seed ${opts.seed} --seconds ${opts.seconds} --nodes ${opts.nodes}${opts.faults ? ` --faults ${opts.faults.join(",")}` : ""}`;
  const kinds = (opts.faults ?? [...FAULT_KINDS]).filter((k) => k !== "db-restart" || opts.nodes > 0);
  // The schedule and the workload's shape come from `plan`; the load's choices (host plans, routing,
  // pauses) from `rand`, whose draws also depend on timing.
  const plan = new Rng(opts.seed);
  const rand = new Rng(opts.seed ^ 0x5bd1e995);
  const violations: string[] = [];
  const violate = (s: string) => violations.push(s);
  const problems: string[] = [];
  const faults: Record<string, number> = {};
  const httpStats: Record<string, number> = {};
  let withCalls = 0;
  let cancels = 0;
  const invalidBefore = invalidFrames.length;
  note(`seed ${opts.seed}; ${opts.nodes === 0 ? "one node on SQLite" : `${opts.nodes} nodes on PostgreSQL`}; faults ${kinds.join(", ")}; ${opts.seconds} s`);

  const fleet: Fleet = await startFleet({ nodes: opts.nodes, token: TOKEN, leaseMs: LEASE_MS, seed: opts.seed });
  const hosts = new Map<string, CrashHost>();
  const hostTenant = new Map<string, Tenant>();
  const sessions: Load[] = [];
  let stopping = false;
  const drivers: Promise<void>[] = [];
  try {
    const anyLive = () => rand.pick(fleet.live());
    const urlOf = (s: Slot) => s.node!.url;

    // Tenants: API keys made by the operator; each tenant's hosts register with its key.
    const tenants: Tenant[] = [];
    for (let t = 0; t < (opts.tenants ?? 2); t++) {
      const r = await http(urlOf(fleet.slots[0]!), TOKEN, "POST", "/v1/keys", { name: `tenant-${t}` });
      if (r.status !== 201) throw new Error(`creating tenant ${t}'s key: ${r.status} ${JSON.stringify(r.body)}`);
      tenants.push({ name: `tenant-${t}`, keyId: r.body.id, token: r.body.key });
    }
    const connect = async (h: CrashHost, slot: Slot) => {
      const tenant = hostTenant.get(h.hostId)!;
      for (let attempt = 1; ; attempt++) {
        try {
          return await h.connect({ url: urlOf(slot), token: tenant.token }, slot.index);
        } catch (e) {
          if (attempt >= 8) throw e;
          await sleep(300);
          if (slot.node === undefined && fleet.live().length > 0) slot = anyLive();
        }
      }
    };
    /** A displaced or dropped host goes back to the node owning most of its sessions. */
    const reconnect = async (h: CrashHost) => {
      const mine = sessions.filter((s) => s.hostId === h.hostId).map((s) => s.id);
      await connect(h, await fleet.ownerOf(mine, anyLive));
    };

    const newSession = async (host: CrashHost, slot: Slot, deadlineMs: number | undefined) => {
      const tenant = hostTenant.get(host.hostId)!;
      // Enough turns for the whole run (a session does a turn every 1–3 s): a script that ran out would stop the load.
      const body = { model: { provider: "scripted", script: script(Math.max(100, opts.seconds)) }, tools: [placed(echo, host.hostId)], ...(deadlineMs === undefined ? {} : { deadlineMs }) };
      for (let attempt = 1; ; attempt++) {
        const r = await http(urlOf(slot), tenant.token, "POST", "/v1/sessions", body);
        if (r.status === 201) {
          sessions.push({ id: r.body.id, hostId: host.hostId, createdVia: slot.nodeId, messages: [], attempts: 0, tenant });
          return;
        }
        if (attempt >= 5) throw new Error(`creating a session through ${slot.nodeId} failed: ${r.status} ${JSON.stringify(r.body)} ${r.error ?? ""}`);
        await sleep(300);
      }
    };

    // A driver per session sends a message whenever its turn is over (through its host's node
    // mostly), and now and then cancels the turn it just started.
    const drive = (s: Load) =>
      drivers.push(
        (async () => {
          while (!stopping) {
            const host = hosts.get(s.hostId)!;
            const nodes = fleet.live();
            if (host.node === undefined || nodes.length === 0) {
              await sleep(200);
              continue;
            }
            const mine = fleet.slots[host.node]!;
            const via = mine.node !== undefined && rand.chance(0.7) ? mine : rand.pick(nodes);
            const text = `${s.id} message ${++s.attempts}`;
            const r = await http(urlOf(via), s.tenant.token, "POST", `/v1/sessions/${s.id}/messages`, { text });
            const key = r.status === 0 ? "network error" : `${r.status}${r.body?.error?.code ? ` ${r.body.error.code}` : ""}`;
            httpStats[key] = (httpStats[key] ?? 0) + 1;
            if (r.status === 202) {
              s.messages.push({ sequence: r.body.sequence, activation: r.body.activation, text, via: via.nodeId });
              if (rand.chance(0.08)) {
                await sleep(rand.int(20, 300));
                // The node may have died meanwhile (a kill fault): any live one, or no cancel this time.
                const to = via.node !== undefined ? via : fleet.live().length > 0 ? anyLive() : undefined;
                const c = to === undefined ? { status: 0, body: undefined } : await http(urlOf(to), s.tenant.token, "POST", `/v1/sessions/${s.id}/cancel`, {});
                if (c.status === 200) cancels++;
                else if (![0, 409, 503].includes(c.status)) violate(`POST /v1/sessions/${s.id}/cancel: unexpected ${c.status} ${JSON.stringify(c.body)}`);
              }
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

    // Two hosts per tenant, spread over the nodes; a third of the sessions have a 400 ms deadline,
    // which the hosts' plans (up to four frames, 20–250 ms apart) sometimes overrun.
    let h = 0;
    for (const tenant of tenants) {
      for (let i = 0; i < 2; i++, h++) {
        const slot = fleet.slots[h % fleet.slots.length]!;
        const host = new CrashHost(`verify-${tenant.name}-h${i}`, `verify-${tenant.name}-h${i}-secret`, [echo], rand, (p) => problems.push(p), true);
        hosts.set(host.hostId, host);
        hostTenant.set(host.hostId, tenant);
        await connect(host, slot);
        for (let k = 0; k < (opts.sessionsPerHost ?? 3); k++) await newSession(host, slot, plan.chance(0.33) ? 400 : undefined);
      }
    }
    sessions.forEach(drive);
    note(`${tenants.length} tenants, ${hosts.size} hosts, ${sessions.length} sessions; load running`);

    const onSlot = (slot: Slot) => [...hosts.values()].filter((x) => x.node === slot.index);
    // Faults run for `seconds` from here (setting up several nodes takes a while). They come in
    // shuffled cycles of every kind, so even a short run injects each at least once.
    const until = Date.now() + opts.seconds * 1000;
    let round = 0;
    const bag: FaultKind[] = [];
    while (Date.now() < until) {
      await sleep(plan.int(1000, 3000));
      if (bag.length === 0) {
        bag.push(...kinds);
        for (let i = bag.length - 1; i > 0; i--) {
          const j = plan.int(0, i);
          [bag[i], bag[j]] = [bag[j]!, bag[i]!];
        }
      }
      const kind = bag.pop()!;
      round++;
      faults[kind] = (faults[kind] ?? 0) + 1;
      if (kind === "kill" || kind === "pause") {
        const victim = fleet.slots[plan.int(0, fleet.slots.length - 1)]!;
        if (victim.node === undefined) continue;
        // Strike while a host on it works on a call.
        const waitUntil = Date.now() + 5000;
        while (Date.now() < waitUntil && !onSlot(victim).some((x) => x.working.size > 0)) await sleep(20);
        const inFlight = onSlot(victim).reduce((n, x) => n + x.working.size, 0);
        if (inFlight > 0) withCalls++;
        if (kind === "pause") {
          // Up to twice the lease: on PostgreSQL the others may take its sessions over meanwhile.
          const ms = plan.int(200, 2 * LEASE_MS);
          victim.node.child.kill("SIGSTOP");
          note(`round ${round}: SIGSTOP ${victim.nodeId} for ${ms} ms with ${inFlight} call(s) in flight`);
          await sleep(ms);
          victim.node?.child.kill("SIGCONT");
          continue;
        }
        const displaced = onSlot(victim);
        const dead = victim.nodeId;
        await fleet.kill(victim);
        const how = plan.chance(0.5) ? "new id" : "same id";
        note(`round ${round}: SIGKILL ${dead} with ${inFlight} call(s) in flight; back with ${fleet.kind === "sqlite" ? "its data folder" : how}`);
        const dropUntil = Date.now() + 10_000;
        while (Date.now() < dropUntil && displaced.some((x) => x.connected)) await sleep(20);
        await fleet.restart(victim, how);
        for (const x of displaced) await reconnect(x);
      } else if (kind === "drop-host") {
        const connected = [...hosts.values()].filter((x) => x.connected);
        if (connected.length === 0) continue;
        const x = plan.pick(connected);
        const working = x.working.size;
        await x.drop();
        note(`round ${round}: cut ${x.hostId}'s connection with ${working} call(s) in flight`);
        await sleep(plan.int(50, 1000));
        await reconnect(x);
      } else if (kind === "db-restart") {
        const mode = plan.chance(0.5) ? "immediate" : "fast";
        const downMs = plan.int(0, 1500);
        note(`round ${round}: PostgreSQL restart (${mode}), down ${downMs} ms`);
        await fleet.cluster!.restart(mode, downMs);
        note(`round ${round}: PostgreSQL back`);
        // Hosts whose node ended their connection (a node that lost its database) come back.
        await sleep(500);
        for (const x of hosts.values()) if (!x.connected) await reconnect(x);
      }
    }

    // Settle: no new messages; the hosts go on serving until every session is idle with no open call.
    stopping = true;
    await Promise.all(drivers);
    for (const x of hosts.values()) if (!x.connected) await reconnect(x);
    note(`faults stopped after ${round} rounds; settling`);
    /** Waits until every session is idle with no open call (up to 90 s); `when` names the moment in a finding. */
    const settle = async (when: string): Promise<void> => {
      const settleUntil = Date.now() + 90_000;
      const unsettled = new Map(sessions.map((s) => [s.id, "not read yet"]));
      while (unsettled.size > 0 && Date.now() < settleUntil) {
        for (const s of sessions) {
          if (!unsettled.has(s.id)) continue;
          const r = await http(urlOf(anyLive()), s.tenant.token, "GET", `/v1/sessions/${s.id}`);
          if (r.status === 200 && r.body.status !== "running" && r.body.openCalls.length === 0) unsettled.delete(s.id);
          else unsettled.set(s.id, r.status === 200 ? `status ${r.body.status}, open calls ${JSON.stringify(r.body.openCalls)}` : `${r.status} ${JSON.stringify(r.body)} ${r.error ?? ""}`);
        }
        if (unsettled.size > 0) await sleep(250);
      }
      for (const [id, why] of unsettled) violate(`session ${id} did not settle in 90 s ${when}: ${why}`);
    };
    await settle("after the faults");

    // Every session is usable afterwards: one more message, waited for, through any node.
    for (const s of sessions) {
      const text = `${s.id} after the faults`;
      const via = anyLive();
      const r = await http(urlOf(via), s.tenant.token, "POST", `/v1/sessions/${s.id}/messages`, { text, wait: true }, 60_000);
      if (r.status !== 200 && r.status !== 202) violate(`session ${s.id} is not usable after the run: ${r.status} ${JSON.stringify(r.body)} ${r.error ?? ""}`);
      else s.messages.push({ sequence: r.body.sequence, activation: r.body.activation, text, via: via.nodeId });
    }
    await Promise.all([...hosts.values()].map((x) => x.idle()));
    // A waited-for message returns when its turn completes, but calls it left running in the
    // background (a result now, the finish later) wake the loop for more turns: the journals are
    // read once those are over too, or a turn still running would read as one that never ended.
    await settle("after the last messages");

    // No tenant sees another's sessions: its listing is exactly its own, another's session is 404.
    for (const t of tenants) {
      const own = new Set(sessions.filter((s) => s.tenant === t).map((s) => s.id));
      const r = await http(urlOf(anyLive()), t.token, "GET", "/v1/sessions?limit=1000");
      const listed = new Set<string>((r.body?.sessions ?? []).map((s: { id: string }) => s.id));
      if (r.status !== 200 || listed.size !== own.size || [...own].some((id) => !listed.has(id))) violate(`${t.name}'s listing is not exactly its ${own.size} sessions: ${r.status}, ${listed.size} listed`);
      const other = sessions.find((s) => s.tenant !== t);
      if (other !== undefined) {
        for (const path of [`/v1/sessions/${other.id}`, `/v1/sessions/${other.id}/events`]) {
          const x = await http(urlOf(anyLive()), t.token, "GET", path);
          if (x.status !== 404) violate(`${t.name} read ${path} of ${other.tenant.name}: ${x.status}`);
        }
      }
    }

    // The ledger: every session's journal as served (operator), against what the clients were told.
    const journals = new Map<string, JournalRecord[]>();
    for (const s of sessions) {
      const r = await http(urlOf(anyLive()), TOKEN, "GET", `/v1/sessions/${s.id}/events`);
      if (r.status !== 200) violate(`GET events of ${s.id}: ${r.status} ${JSON.stringify(r.body)} ${r.error ?? ""}`);
      else journals.set(s.id, r.body.records as JournalRecord[]);
    }
    const sent = [...hosts.values()].flatMap((x) => x.sent);
    const invokes = [...hosts.values()].flatMap((x) => x.invokes);
    const ledger = checkLedger({ journals, sessions, sent, invokes, allowedEnds: ["cancelled", "timeout"] });
    violations.push(...ledger.violations);
    if (invalidFrames.length > invalidBefore) violate(`frames off the contract: ${JSON.stringify(invalidFrames.slice(invalidBefore, invalidBefore + 5))}`);
    for (const p of problems) violate(`host: ${p}`);

    const report: VerifyReport = {
      seed: opts.seed,
      ms: Date.now() - started,
      replay,
      faults,
      faultsWithCallsInFlight: withCalls,
      sessions: sessions.length,
      records: [...journals.values()].reduce((n, j) => n + j.length, 0),
      callsStarted: ledger.callsStarted,
      invokes: invokes.length,
      hostAcks: sent.filter((x) => x.answer?.type === "committed").length,
      messagesAcknowledged: sessions.reduce((n, s) => n + s.messages.length, 0),
      cancels,
      ends: Object.fromEntries(ledger.ends),
      http: httpStats,
      violations,
      log,
    };
    if (violations.length > 0) {
      report.evidenceFile = join(tmpdir(), `brain-verify-${opts.seed}-${process.pid}.json`);
      const nodes = fleet.slots.flatMap((s) => s.past.map((p, i) => ({ slot: s.index, process: i + 1, nodeId: p.nodeId, output: p.node.output() })));
      writeFileSync(report.evidenceFile, JSON.stringify({ ...report, sessions, sent, invokes, journals: Object.fromEntries(journals), nodes }, null, 1));
      report.violations = violations.map((v, i) => (i < 5 ? v + journalExcerpt(v, journals) : v));
    }
    return report;
  } finally {
    stopping = true;
    await Promise.all([...hosts.values()].map((x) => x.close().catch(() => undefined)));
    await fleet.stop();
  }
}
