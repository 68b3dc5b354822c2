// Several runtime nodes on one PostgreSQL server (issue 20), as real subprocesses on a real server
// these tests start (initdb + pg_ctl in a temporary folder): any node serves any session (the owner
// runs it), SIGKILL of an owner hands its sessions to a survivor (open calls `unknown` exactly once,
// never re-sent), and a node stopped (SIGSTOP) past its lease writes nothing once resumed.
import { test } from "uvu";
import * as assert from "uvu/assert";
import pg from "pg";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { api, records, waitFor, assertJournal, ofType } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost } from "./helpers/host.ts";
import { RawLink } from "./helpers/link.ts";
import { startPgCluster } from "./helpers/pg-cluster.ts";
import type { PgCluster } from "./helpers/pg-cluster.ts";
import { freshDatabase, kill9, killAll, nodeEnv as nodeEnvOf, queryRows as rows, startNode, twoNodes as twoNodesOn } from "./helpers/nodes.ts";
import { PostgresStore } from "../src/journal/postgres.ts";
import { Leases } from "../src/cluster/leases.ts";

const TOKEN = "cluster-operator-token-0001";
const LEASE_MS = 1500;
const echo = contract("echo");
let cluster: PgCluster;
let databases = 0;

test.before(async () => {
  cluster = await startPgCluster();
});

test.after(async () => {
  await killAll();
  await cluster?.stop();
});

const nodeEnv = nodeEnvOf(LEASE_MS);
const as = (n: { url: string }) => ({ url: n.url, token: TOKEN }) as Brain;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const twoNodes = () => twoNodesOn(cluster.url, `nodes_${++databases}`, TOKEN, LEASE_MS);

async function sessionWithCall(node: { url: string }, host: TestHost, script = [{ toolCalls: [{ name: "echo", input: { n: 1 } }] }, { text: "done" }]) {
  const r = await api(as(node), "POST", "/v1/sessions", { model: { provider: "scripted", script }, tools: [placed(echo, host.hostId)] });
  assert.is(r.status, 201, JSON.stringify(r.body));
  return r.body.id as string;
}

test("the fence: a write proves its lease in its own transaction; a lease is never taken from a live node; an expired node writes nothing", async () => {
  const db = await freshDatabase(cluster.url, `nodes_${++databases}`);
  const node = async (nodeId: string) => {
    const tokens = new Map<string, number>();
    const fenced: string[] = [];
    let leases: Leases | undefined;
    const store = await PostgresStore.open(db, { fence: { nodeId, run: () => leases?.run, tokenOf: (id) => tokens.get(id), fenced: (refused) => fenced.push(...refused.map((r) => r.sessionId)) } });
    leases = new Leases(store.readers, nodeId, 60_000);
    await leases.join(`http://${nodeId}.invalid`);
    return { store, leases, tokens, fenced };
  };
  const a = await node("fence-a");
  const b = await node("fence-b");
  const rec = (sessionId: string, sequence: number, type = "tool.returned", data: unknown = { callId: `${sessionId}:1` }) => ({ sessionId, sequence, at: Date.now(), type, data }) as JournalRecord;
  const created = (id: string) => rec(id, 1, "session.created", { model: { provider: "scripted", script: [] }, tools: [] });
  try {
    // A new session's lease is made with its first record, token 1.
    a.tokens.set("s1", 1);
    await a.store.append(created("s1"));
    assert.equal(await rows(db, "SELECT owner, token FROM leases WHERE session_id = 's1'"), [{ owner: "fence-a", token: "1" }]);
    // B may not take it while A is alive, nor write to it.
    const view = await b.leases.lookup("s1");
    assert.equal({ owner: view?.owner, alive: view?.alive }, { owner: "fence-a", alive: true });
    assert.is(await b.leases.acquire("s1", view), undefined);
    b.tokens.set("s1", 1);
    await b.store.append(rec("s1", 2)).then(() => assert.unreachable("B wrote without the lease"), (e) => assert.is(e.code, "conflict"));
    assert.equal(b.fenced, ["s1"]);
    // A's lease runs out (as if A were stopped): B takes the session with token 2; A's write is refused.
    await rows(db, "UPDATE nodes SET expires_at = clock_timestamp() - interval '1 second' WHERE node_id = 'fence-a'");
    assert.is(await b.leases.acquire("s1", await b.leases.lookup("s1")), 2);
    b.tokens.set("s1", 2);
    await a.store.append(rec("s1", 2)).then(() => assert.unreachable("A wrote after losing the lease"), (e) => assert.is(e.code, "conflict"));
    assert.equal(a.fenced, ["s1"]);
    await b.store.append(rec("s1", 2));
    // A finds out at its next renewal; a session nobody took is not A's to write either while A is expired.
    assert.is(await a.leases.renew(), false);
    a.tokens.set("s2", 1);
    await a.store.append(created("s2")).then(() => assert.unreachable("an expired node wrote"), (e) => assert.is(e.code, "conflict"));
    // One batch, two sessions, one of them lost: only the lost one's record is refused.
    await a.leases.join("http://fence-a.invalid");
    a.tokens.set("s3", 1);
    a.tokens.set("s1", 1);
    const results = await Promise.allSettled([a.store.append(created("s3")), a.store.append(rec("s1", 3))]);
    assert.equal(results.map((r) => r.status), ["fulfilled", "rejected"]);
    const journal = await rows(db, "SELECT session_id, sequence FROM journal ORDER BY session_id, sequence");
    assert.equal(journal, [{ session_id: "s1", sequence: 1 }, { session_id: "s1", sequence: 2 }, { session_id: "s3", sequence: 1 }]);
    // A second process joins as fence-a (a restart): the node row is alive, but it is the new run's,
    // so the first process writes nothing more, and its renewal tells it so.
    const again = await node("fence-a");
    try {
      await a.store.append(rec("s3", 2)).then(() => assert.unreachable("the replaced run wrote"), (e) => assert.is(e.code, "conflict"));
      assert.is(await a.leases.renew(), false);
      assert.is(await again.leases.acquire("s3", await again.leases.lookup("s3")), 2);
      again.tokens.set("s3", 2);
      await again.store.append(rec("s3", 2));
    } finally {
      await again.store.close();
    }
  } finally {
    await a.store.close();
    await b.store.close();
  }
});

test("the fence in a batch of running sessions (no head written, no new lease): a session whose token changed is refused, the others written", async () => {
  const db = await freshDatabase(cluster.url, `nodes_${++databases}`);
  const tokens = new Map<string, number>();
  const fenced: string[] = [];
  let leases: Leases | undefined;
  const store = await PostgresStore.open(db, { fence: { nodeId: "run-a", run: () => leases?.run, tokenOf: (id) => tokens.get(id), fenced: (refused) => fenced.push(...refused.map((r) => r.sessionId)) } });
  leases = new Leases(store.readers, "run-a", 60_000);
  await leases.join("http://run-a.invalid");
  const rec = (sessionId: string, sequence: number, type: string, data: unknown) => ({ sessionId, sequence, at: Date.now(), type, data }) as JournalRecord;
  const started = (id: string, sequence: number) => rec(id, sequence, "tool.call_started", { callId: `${id}:${sequence}`, tool: "t", input: {}, placement: "host", activation: 0, deadlineAt: null });
  try {
    for (const id of ["r1", "r2"]) tokens.set(id, 1);
    await Promise.all(["r1", "r2"].map((id) => store.append(rec(id, 1, "session.created", { model: { provider: "scripted", script: [] }, tools: [] }))));
    // Open work appears: both rows are written ("open work"), then a second call each is not due.
    await Promise.all(["r1", "r2"].map((id) => store.append(started(id, 2))));
    // r1's lease changes hands behind this node's back (taken and given back under a new token).
    await rows(db, "UPDATE leases SET token = 7 WHERE session_id = 'r1'");
    const results = await Promise.allSettled([store.append(started("r1", 3)), store.append(started("r2", 3))]);
    assert.equal(results.map((r) => r.status), ["rejected", "fulfilled"]);
    assert.is((results[0] as PromiseRejectedResult).reason.code, "conflict");
    assert.equal(fenced, ["r1"]);
    assert.equal(await rows(db, "SELECT session_id, sequence FROM journal ORDER BY session_id, sequence"), [
      { session_id: "r1", sequence: 1 }, { session_id: "r1", sequence: 2 },
      { session_id: "r2", sequence: 1 }, { session_id: "r2", sequence: 2 }, { session_id: "r2", sequence: 3 },
    ]);
    // The batch wrote no head: r2's row lags its records (folded by whoever reads it).
    assert.equal(await rows(db, "SELECT session_id, last_sequence, open_calls FROM sessions ORDER BY session_id"), [
      { session_id: "r1", last_sequence: 2, open_calls: 1 }, { session_id: "r2", last_sequence: 2, open_calls: 1 },
    ]);
  } finally {
    await store.close();
  }
});

test("the fence: a takeover waits for the old owner's write in flight (which holds the owner's node row), then finds it written", async () => {
  const db = await freshDatabase(cluster.url, `nodes_${++databases}`);
  const store = await PostgresStore.open(db); // migrates the database
  const pool = store.readers;
  try {
    const stuck = new Leases(pool, "stuck", 60_000);
    const taker = new Leases(pool, "taker", 60_000);
    await stuck.join("http://stuck.invalid");
    await taker.join("http://taker.invalid");
    await rows(db, "INSERT INTO leases (session_id, owner, token) VALUES ('s1', 'stuck', 1)");
    await rows(db, "INSERT INTO sessions (session_id, created_at, last_sequence, activations, model_requests, open_calls, open_model_requests, turn_open, deleted) VALUES ('s1', 0, 1, 0, 0, 1, 0, false, false)");
    // The stuck node's write: its node row held FOR KEY SHARE in an open transaction, as a batch
    // holds it while it runs; then its lease runs out.
    const write = new pg.Client({ connectionString: db });
    await write.connect();
    try {
      await write.query("BEGIN");
      const locked = await write.query("SELECT 1 FROM nodes WHERE node_id = 'stuck' AND run = $1 AND expires_at > clock_timestamp() FOR KEY SHARE", [stuck.run]);
      assert.is(locked.rowCount, 1);
      await rows(db, "UPDATE nodes SET expires_at = clock_timestamp() - interval '1 second' WHERE node_id = 'stuck'");
      const view = await taker.lookup("s1");
      assert.is(view?.alive, false);
      let taken: number | undefined | "pending" = "pending";
      const acquiring = taker.acquire("s1", view).then((t) => (taken = t));
      await sleep(400);
      assert.is(taken, "pending", "the takeover waited for the write in flight");
      await write.query("INSERT INTO journal (session_id, sequence, at, type, data) VALUES ('s1', 2, 0, 'tool.returned', '{}')");
      await write.query("COMMIT");
      await acquiring;
      assert.is(taken, 2);
      assert.equal(await rows(db, "SELECT sequence FROM journal WHERE session_id = 's1'"), [{ sequence: 2 }]);
    } finally {
      await write.end();
    }
  } finally {
    await store.close();
  }
});

test("long-dead nodes' rows, host links and Brain-managed hosts are swept; their sessions' leases stay takeable, and a swept node that comes back rejoins", async () => {
  const db = await freshDatabase(cluster.url, `nodes_${++databases}`);
  const store = await PostgresStore.open(db); // migrates the database
  try {
    const live = new Leases(store.readers, "sweeper", 60_000);
    const gone = new Leases(store.readers, "gone", 60_000);
    await live.join("http://sweeper.invalid");
    await gone.join("http://gone.invalid");
    await rows(db, "INSERT INTO nodes (node_id, url, expires_at, run) VALUES ('recent', 'http://recent.invalid', clock_timestamp() - interval '1 minute', 'r')");
    await rows(db, "UPDATE nodes SET expires_at = clock_timestamp() - interval '2 hours' WHERE node_id = 'gone'");
    await rows(db, "INSERT INTO leases (session_id, owner, token) VALUES ('s1', 'gone', 3)");
    await rows(db, "INSERT INTO sessions (session_id, created_at, last_sequence, activations, model_requests, open_calls, open_model_requests, turn_open, deleted) VALUES ('s1', 0, 1, 0, 0, 1, 0, false, false)");
    await rows(db, "INSERT INTO host_links (host_id, node_id, url) VALUES ('h-gone', 'gone', 'http://gone.invalid'), ('h-recent', 'recent', 'http://recent.invalid'), ('managed-0123', 'gone', 'http://gone.invalid')");
    // A Brain-managed host the dead node ran goes with it (its process was the node's); an application's host stays registered.
    await rows(db, "INSERT INTO hosts (host_id, salt, hash, contracts, registered_at) VALUES ('managed-0123', 's', 'h', '[]', 0), ('h-gone', 's', 'h', '[]', 0)");
    assert.is(await live.forgetDead(60 * 60_000), 1);
    assert.equal(await rows(db, "SELECT node_id FROM nodes ORDER BY node_id"), [{ node_id: "recent" }, { node_id: "sweeper" }]);
    assert.equal(await rows(db, "SELECT host_id FROM host_links"), [{ host_id: "h-recent" }]);
    assert.equal(await rows(db, "SELECT host_id FROM hosts"), [{ host_id: "h-gone" }]);
    // The session of the swept node is an orphan like any dead node's, and taken with a raised token.
    assert.equal((await live.orphaned()).map((o) => o.sessionId), ["s1"]);
    const view = await live.lookup("s1");
    assert.equal({ owner: view?.owner, alive: view?.alive }, { owner: "gone", alive: false });
    assert.is(await live.acquire("s1", view), 4);
    // The swept node, had it only been stopped: its renewal is refused; it joins again.
    assert.is(await gone.renew(), false);
    await gone.join("http://gone.invalid");
    assert.is(await gone.renew(), true);
  } finally {
    await store.close();
  }
});

test("a store whose connections were cut (terminated by the server) reconnects: the batch in flight fails, the next ones are written", async () => {
  const db = await freshDatabase(cluster.url, `nodes_${++databases}`);
  const store = await PostgresStore.open(db);
  const rec = (sequence: number) => ({ sessionId: "s1", sequence, at: Date.now(), type: sequence === 1 ? "session.created" : "tool.returned", data: sequence === 1 ? { model: { provider: "scripted", script: [] }, tools: [] } : { callId: "s1:1" } }) as JournalRecord;
  try {
    await store.append(rec(1));
    await rows(db, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
    await new Promise((r) => setTimeout(r, 200));
    const first = await store.append(rec(2)).then(() => "written", (e: Error) => e.message);
    // Whether the cut is noticed by this batch or by the next one, a later batch is written.
    let next = first === "written" ? 3 : 2;
    await store.append(rec(next));
    next += 1;
    await store.append(rec(next));
    const journal = await rows(db, "SELECT sequence FROM journal WHERE session_id = 's1' ORDER BY sequence");
    assert.equal(journal.map((r) => r.sequence), Array.from({ length: next }, (_, i) => i + 1));
  } finally {
    await store.close();
  }
});

test("two nodes on one PostgreSQL: either node serves a session (the owner runs it), one journal, one lease", async () => {
  const { db, a, b } = await twoNodes();
  const host = await TestHost.register(as(a), [echo], { hostId: "host-a", secret: "host-a-secret-0001" });
  const id = await sessionWithCall(a, host);
  // A message through node B reaches the owner (A), whose host gets the call.
  const sent = await api(as(b), "POST", `/v1/sessions/${id}/messages`, { text: "go" });
  assert.is(sent.status, 202, JSON.stringify(sent.body));
  const invoke = await host.invoke();
  assert.is((await host.request({ type: "emit_result", callId: invoke.callId, outcome: { status: "ok", value: { n: 1 } } })).type, "committed");
  const viaB = await waitFor(as(b), id, (r) => r.type === "turn.completed");
  const viaA = await records(as(a), id);
  assert.equal(viaA, viaB);
  assertJournal(viaB);
  // Both nodes list it; a session unknown to both is 404 on both.
  for (const n of [a, b]) {
    const list = await api(as(n), "GET", "/v1/sessions");
    assert.ok(list.body.sessions.some((s: { id: string }) => s.id === id));
    assert.is((await api(as(n), "GET", "/v1/sessions/ses_00000000000000000000")).status, 404);
  }
  const lease = await rows(db, "SELECT owner, token FROM leases WHERE session_id = $1", [id]);
  assert.equal(lease, [{ owner: "node-a", token: "1" }]);
  // A session created through B is B's.
  const host2 = await TestHost.register(as(b), [echo], { hostId: "host-b", secret: "host-b-secret-0001" });
  const id2 = await sessionWithCall(b, host2, [{ text: "hello" }]);
  assert.is((await api(as(a), "POST", `/v1/sessions/${id2}/messages`, { text: "hi" })).status, 202);
  await waitFor(as(a), id2, (r) => r.type === "turn.completed");
  assert.equal(await rows(db, "SELECT owner FROM leases WHERE session_id = $1", [id2]), [{ owner: "node-b" }]);
  // Listing pages come from the database on either node: B's newest session first, and a cursor A gave continues on B.
  const first = await api(as(a), "GET", "/v1/sessions?limit=1");
  assert.equal([first.body.sessions.map((s: { id: string }) => s.id), typeof first.body.next], [[id2], "string"]);
  const rest = await api(as(b), "GET", `/v1/sessions?limit=1&cursor=${first.body.next}`);
  assert.equal([rest.body.sessions.map((s: { id: string }) => s.id), rest.body.next], [[id], undefined]);
  // A host's placed sessions are found through the same pages.
  assert.equal((await api(as(b), "GET", "/v1/hosts/host-a")).body.sessions, [id]);
  // An API key issued through one node works on the other at once.
  const key = await api(as(a), "POST", "/v1/keys", { name: "app" });
  assert.is(key.status, 201);
  assert.is((await api(as(b), "GET", "/v1/sessions", undefined, { token: key.body.key })).status, 200);
  await host.close();
  await host2.close();
});

test("a key issued through one node works on another at once (HTTP and a host's register), even just after that node read credentials for another unknown name; wrong tokens stay 401", async () => {
  const { a, b } = await twoNodes();
  for (let i = 0; i < 5; i++) {
    // B reads keys and hosts for a host it does not know, then a key is issued through A: B's next read must follow it.
    assert.is((await api(as(b), "GET", `/v1/hosts/nobody-${i}`)).status, 404);
    const key = await api(as(a), "POST", "/v1/keys", { name: `app-${i}` });
    assert.is(key.status, 201, JSON.stringify(key.body));
    const listed = await api(as(b), "GET", "/v1/sessions", undefined, { token: key.body.key });
    assert.is(listed.status, 200, `round ${i}: ${JSON.stringify(listed.body)}`);
  }
  // A host's register frame with a key issued through A a moment ago is registered on B, not closed 4401.
  for (let i = 0; i < 3; i++) {
    const key = await api(as(a), "POST", "/v1/keys", { name: `host-key-${i}` });
    assert.is(key.status, 201, JSON.stringify(key.body));
    const host = await TestHost.register({ url: b.url, token: key.body.key }, [echo], { hostId: `fresh-key-host-${i}`, secret: `fresh-key-secret-000${i}` });
    await host.close();
  }
  // A burst of wrong tokens shares reads and is refused, each with a typed 401.
  const wrong = await Promise.all(Array.from({ length: 20 }, (_, i) => api(as(b), "GET", "/v1/sessions", undefined, { token: `brk_wrong_${i}` })));
  assert.equal([...new Set(wrong.map((r) => `${r.status} ${r.body.error?.code}`))], ["401 unauthorized"]);
});

test("a host connected to one node serves sessions another node owns: calls go through the host's node, answers are journaled by the owner", async () => {
  const { a, b } = await twoNodes();
  // The host is connected to A only; the session is created through B, so B owns it.
  const host = await TestHost.register(as(a), [echo], { hostId: "host-r", secret: "host-r-secret-0001" });
  const id = await sessionWithCall(b, host, [{ toolCalls: [{ name: "echo", input: { n: 1 } }] }, { toolCalls: [{ name: "echo", input: { n: 2 } }] }, { text: "done" }]);
  // Every node lists it (GET /v1/hosts, the operator's hosts page), connected to A; only A has seen it.
  const listed = async (n: { url: string }) => ((await api(as(n), "GET", "/v1/hosts")).body.hosts as Array<{ hostId: string; registeredAt: string; connected: boolean; node?: string; lastSeenAt?: string }>).find((x) => x.hostId === "host-r");
  const onA = await listed(a);
  const onB = await listed(b);
  assert.equal({ connected: onA?.connected, node: onA?.node }, { connected: true, node: "node-a" });
  assert.ok(onA?.lastSeenAt !== undefined && Date.parse(onA.lastSeenAt) > Date.now() - 60_000, "A saw it lately");
  assert.equal(onB, { hostId: "host-r", registeredAt: onA!.registeredAt, tools: ["echo"], connected: true, node: "node-a" });
  assert.is((await api(as(b), "POST", `/v1/sessions/${id}/messages`, { text: "go" })).status, 202);
  const call = await host.invoke();
  assert.equal(call.input, { n: 1 });
  const ev = await host.request({ type: "emit", callId: call.callId, kind: "progress", data: { half: true } });
  assert.is(ev.type, "committed", JSON.stringify(ev));
  const res = await host.request({ type: "emit_result", callId: call.callId, outcome: { status: "ok", value: { n: 1 } } });
  assert.is(res.type, "committed", JSON.stringify(res));
  // The sequences the host was given are the owner's journal's.
  const second = await host.invoke(10000);
  let all = await records(as(b), id);
  const event = all.find((r) => r.type === "tool.event");
  assert.is(event?.sequence, (ev as { sequence: number }).sequence);
  assert.equal(event?.data, { callId: call.callId, kind: "progress", data: { half: true } });
  assert.is((await host.request({ type: "finish", callId: call.callId })).type, "committed");
  // A late frame for a finished call is refused as a local host's would be.
  const late = await host.request({ type: "emit", callId: call.callId, kind: "late", data: {} });
  assert.is(late.type, "rejected");
  assert.is((late as { error: { code: string } }).error.code, "call_finished");
  // The host's node dies with the second call open: the owner ends it `unknown` (it may have run).
  await kill9(a.child);
  all = await waitFor(as(b), id, (r) => r.type === "tool.finished" && (r.data as { callId: string }).callId === second.callId, LEASE_MS * 10);
  const finished = ofType(all, "tool.finished").find((f) => f.data.callId === second.callId)!;
  assert.is(finished.data.status, "unknown");
  assertJournal(await records(as(b), id));
});

test("a peer's malformed link messages get typed error answers on a real link, which stays usable", async () => {
  const db = await freshDatabase(cluster.url, `nodes_${++databases}`);
  const node = await startNode(db, TOKEN, { ...nodeEnv, BRAIN_NODE_ID: "node-l" });
  const host = await TestHost.register(as(node), [echo], { hostId: "host-l", secret: "host-l-secret-0001" });
  // Only the operator token opens a link.
  const refused = await RawLink.open(node.url, "not-the-operator-token").then(() => "opened", (e: Error) => e.message);
  assert.match(refused, "401");
  const link = await RawLink.open(node.url, TOKEN);
  try {
    // Not JSON, and a notice that does not match its def: no id to name, answered anyway.
    link.send("{nope");
    const notJson = await link.next();
    assert.is(notJson.type === "error" && notJson.re, undefined);
    assert.is(notJson.type === "error" && notJson.error.code, "malformed_json");
    link.send({ type: "stop", hostId: "host-l", callId: "ses_l:1", status: "later" });
    const badNotice = await link.next();
    assert.is(badNotice.type === "error" && badNotice.error.code, "invalid_frame", JSON.stringify(badNotice));
    assert.is(badNotice.type === "error" && badNotice.re, undefined);
    // A request missing a field, and one of a type the node does not know: answered by id.
    link.send({ type: "emit", id: 1, callId: "ses_l:1", data: {} });
    const invalid = await link.next((m) => m.type === "error" && m.re === 1);
    assert.is(invalid.type === "error" && invalid.error.code, "invalid_frame");
    assert.match(invalid.type === "error" ? invalid.error.message : "", /^invalid LinkEmit: \/kind/);
    assert.ok(invalid.type === "error" && Array.isArray(invalid.error.details), "the issues are listed");
    link.send({ type: "reticulate", id: 2 });
    const unknown = await link.next((m) => m.type === "error" && m.re === 2);
    assert.is(unknown.type === "error" && unknown.error.code, "unknown_frame");
    // The same link still carries valid requests: a call for the host connected there is sent to
    // it and answered `invoked`; a frame for a call this node does not run is answered by the relay.
    const frame = { type: "invoke", callId: "ses_link:3", sessionId: "ses_link", sequence: 3, tool: echo.name, digest: echo.digest, input: { n: 7 }, options: {}, deadlineAt: null } as const;
    link.send({ type: "invoke", id: 3, hostId: host.hostId, owner: "http://127.0.0.1:9", frame });
    assert.equal(await link.next((m) => "re" in m && m.re === 3), { type: "invoked", re: 3 });
    assert.equal(await host.invoke(), frame);
    link.send({ type: "emit", id: 4, callId: "ses_other:1", kind: "progress", data: {} });
    const relayed = await link.next((m) => "re" in m && m.re === 4);
    assert.is(relayed.type === "error" && relayed.error.code, "call_finished", JSON.stringify(relayed));
    link.send({ type: "stop", hostId: host.hostId, callId: frame.callId, status: "cancelled" });
    assert.equal(await host.next((f) => f.type === "cancel"), { type: "cancel", callId: frame.callId, status: "cancelled" });
    assert.is(link.ws.readyState, link.ws.OPEN);
    assert.equal(link.invalid, [], "every answer matches the contract's LinkMessage");
  } finally {
    link.close();
    await host.close();
  }
});

test("SIGKILL the owner: after the lease a survivor ends its open call unknown exactly once, never re-sent; the host moves over and new turns work", async () => {
  const { db, a, b } = await twoNodes();
  let host = await TestHost.register(as(a), [echo], { hostId: "host-k", secret: "host-k-secret-0001" });
  const id = await sessionWithCall(a, host, [{ toolCalls: [{ name: "echo", input: { n: 1 } }] }, { toolCalls: [{ name: "echo", input: { n: 2 } }] }, { text: "second done" }]);
  assert.is((await api(as(a), "POST", `/v1/sessions/${id}/messages`, { text: "go" })).status, 202);
  const first = await host.invoke();
  assert.is((await host.request({ type: "emit", callId: first.callId, kind: "progress", data: { half: true } })).type, "committed");
  await kill9(a.child);
  await host.closed;
  // Node B takes the session over by itself (its scan for orphaned open work) once A's lease ran out
  // (how long that takes is measured by the bench, `npm run bench -- --nodes`, not asserted here).
  const all = await waitFor(as(b), id, (r) => r.type === "tool.finished", LEASE_MS * 10);
  const finished = ofType(all, "tool.finished");
  assert.is(finished.length, 1);
  assert.is(finished[0]!.data.status, "unknown");
  assert.equal(await rows(db, "SELECT owner, token FROM leases WHERE session_id = $1", [id]), [{ owner: "node-b", token: "2" }]);
  // The host reconnects to the survivor; the open call is never sent again, a new turn's call is.
  host = await TestHost.register(as(b), [echo], { hostId: "host-k", secret: "host-k-secret-0001" });
  assert.is((await api(as(b), "POST", `/v1/sessions/${id}/messages`, { text: "again" })).status, 202);
  const second = await host.invoke();
  assert.is.not(second.callId, first.callId);
  assert.equal(second.input, { n: 2 });
  assert.is((await host.request({ type: "emit_result", callId: second.callId, outcome: { status: "ok", value: { n: 2 } } })).type, "committed");
  // The first turn failed at the takeover (it is not resumed, `interrupted`: no bug); the second ran on node B.
  const end = await waitFor(as(b), id, (r) => r.type === "turn.completed");
  assert.equal(ofType(end, "turn.failed").map((r) => [r.data.error.code, r.data.error.retryable]), [["interrupted", true]]);
  assertJournal(end);
  assert.is(ofType(end, "tool.call_started").length, 2);
  assert.is(ofType(end, "tool.finished").filter((f) => f.data.callId === first.callId).length, 1);
  assert.is(host.frames.filter((f) => f.type === "invoke").length, 0);
  // The survivor's /metrics: its lease renewals, the takeover and its PostgreSQL group commits.
  const metrics = await fetch(`${b.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((r) => r.text());
  const sample = (name: string) => Number(new RegExp(`^${name.replace(/[{}"]/g, "\\$&")} (\\S+)$`, "m").exec(metrics)?.[1] ?? NaN);
  assert.ok(sample(`brain_lease_renewals_total{outcome="ok"}`) > 0, "lease renewals are counted");
  assert.ok(sample("brain_session_takeovers_total") >= 1, "the takeover is counted");
  assert.is(sample(`brain_journal_commit_records_count{store="postgres"}`) > 0, true);
  await host.close();
});

test("SIGKILL the owner while a call awaits approval: the survivor keeps it waiting (no unknown, no interrupted turn); approved there, it is dispatched once and the turn completes", async () => {
  const { a, b } = await twoNodes();
  let host = await TestHost.register(as(a), [echo], { hostId: "host-approval", secret: "host-approval-secret-0001" });
  const r = await api(as(a), "POST", "/v1/sessions", {
    model: { provider: "scripted", script: [{ toolCalls: [{ name: "echo", input: { n: 7 }, deadlineMs: 120_000 }] }, { text: "approved after failover" }] },
    tools: [{ ...placed(echo, host.hostId), approval: "always" }],
  });
  assert.is(r.status, 201, JSON.stringify(r.body));
  const id = r.body.id as string;
  assert.is((await api(as(a), "POST", `/v1/sessions/${id}/messages`, { text: "go" })).status, 202);
  const started = ofType(await waitFor(as(a), id, (x) => x.type === "tool.call_started"), "tool.call_started")[0]!;
  await kill9(a.child);
  await host.closed;
  host = await TestHost.register(as(b), [echo], { hostId: "host-approval", secret: "host-approval-secret-0001" });
  // Asked through the survivor, the session is taken over once A's lease ran out; the call still waits.
  const until = Date.now() + LEASE_MS * 10;
  let view: { pendingApprovals?: string[]; status?: string } = {};
  while (Date.now() < until && !(view.pendingApprovals ?? []).includes(started.data.callId)) {
    view = (await api(as(b), "GET", `/v1/sessions/${id}`)).body;
    await sleep(100);
  }
  assert.equal(view.pendingApprovals, [started.data.callId]);
  assert.is(view.status, "running", "its turn goes on on the survivor");
  const decided = await api(as(b), "POST", `/v1/sessions/${id}/calls/${started.sequence}/approval`, { decision: "approve", inputDigest: started.data.approval!.inputDigest });
  assert.is(decided.status, 200, JSON.stringify(decided.body));
  const invoke = await host.invoke();
  assert.is(invoke.callId, started.data.callId);
  assert.is((await host.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value: { n: 7 } } })).type, "committed");
  const all = await waitFor(as(b), id, (x) => x.type === "turn.completed");
  assertJournal(all);
  assert.is(ofType(all, "turn.failed").length, 0, "not interrupted");
  assert.equal(ofType(all, "tool.finished").map((f) => f.data.status), ["ok"]);
  assert.is(ofType(all, "turn.completed")[0]!.data.text, "approved after failover");
  await sleep(50);
  assert.is(host.frames.filter((f) => f.type === "invoke").length, 0, "dispatched once");
  await host.close();
});

test("SIGSTOP the owner past its lease: the survivor takes over; resumed, the old owner cannot write a single record", async () => {
  const { db, a, b } = await twoNodes();
  const host = await TestHost.register(as(a), [echo], { hostId: "host-s", secret: "host-s-secret-0001" });
  // The call's deadline passes while A is stopped: on resume, A's deadline timer tries to journal
  // tool.finished(timeout), and the emit the host sent meanwhile tries to journal an event.
  const r = await api(as(a), "POST", "/v1/sessions", {
    model: { provider: "scripted", script: [{ toolCalls: [{ name: "echo", input: { n: 1 }, deadlineMs: LEASE_MS }] }, { text: "done" }] },
    tools: [placed(echo, host.hostId)],
  });
  assert.is(r.status, 201, JSON.stringify(r.body));
  const id = r.body.id as string;
  assert.is((await api(as(a), "POST", `/v1/sessions/${id}/messages`, { text: "go" })).status, 202);
  const call = await host.invoke();
  a.child.kill("SIGSTOP");
  try {
    const all = await waitFor(as(b), id, (x) => x.type === "tool.finished", LEASE_MS * 10);
    assert.is(ofType(all, "tool.finished")[0]!.data.status, "unknown");
    host.send({ type: "emit", ref: host.nextRef(), callId: call.callId, kind: "progress", data: { late: true } });
  } finally {
    a.child.kill("SIGCONT");
  }
  const answer = await host.next((f) => f.type === "rejected" || f.type === "committed", 10000);
  assert.is(answer.type, "rejected", JSON.stringify(answer));
  await sleep(LEASE_MS);
  const after = await records(as(b), id);
  assertJournal(after);
  assert.is(ofType(after, "tool.finished").length, 1, "no timeout written by the resumed node");
  assert.is(ofType(after, "tool.event").length, 0, "no event written by the resumed node");
  // The resumed node rejoined: it still serves requests, forwarding this session to its owner.
  const viaA = await records(as(a), id);
  assert.equal(viaA, await records(as(b), id));
  assert.equal(await rows(db, "SELECT owner FROM leases WHERE session_id = $1", [id]), [{ owner: "node-b" }]);
  await host.close();
});

test("SIGSTOP the owner of a call relayed to a host on another node: the host's frame is answered call_finished once the survivor took the session over, not left waiting", async () => {
  const { a, b } = await twoNodes();
  // The host is connected to B; A owns the session, so the call reaches the host through B.
  const host = await TestHost.register(as(b), [echo], { hostId: "host-p", secret: "host-p-secret-0001" });
  const id = await sessionWithCall(a, host, [{ toolCalls: [{ name: "echo", input: { n: 1 } }] }, { text: "done" }]);
  assert.is((await api(as(a), "POST", `/v1/sessions/${id}/messages`, { text: "go" })).status, 202);
  const call = await host.invoke();
  assert.is((await host.request({ type: "emit", callId: call.callId, kind: "progress", data: { n: 1 } })).type, "committed");
  a.child.kill("SIGSTOP");
  try {
    const all = await waitFor(as(b), id, (x) => x.type === "tool.finished", LEASE_MS * 10);
    assert.is(ofType(all, "tool.finished")[0]!.data.status, "unknown");
    // B relays the frame to A, which does not answer (stopped); after the lease B finds the session
    // its own now, so the call is over. Without a timeout the frame waited for A to run again.
    const ref = host.nextRef();
    host.send({ type: "emit", ref, callId: call.callId, kind: "progress", data: { n: 2 } });
    const answer = await host.next((f) => (f.type === "rejected" || f.type === "committed") && f.ref === ref, LEASE_MS + 2_000 + 8_000);
    assert.is(answer.type, "rejected", JSON.stringify(answer));
    assert.is((answer as { error: { code: string } }).error.code, "call_finished", JSON.stringify(answer));
  } finally {
    a.child.kill("SIGCONT");
  }
  await host.close();
});

test("a node stopped cleanly (SIGTERM) ends its lease at once: another node takes its sessions when asked, without waiting for the lease", async () => {
  const db = await freshDatabase(cluster.url, `nodes_${++databases}`);
  // A lease far longer than this test waits: only the clean stop lets B in.
  const env = { ...nodeEnv, BRAIN_LEASE_MS: "120000" };
  const a = await startNode(db, TOKEN, { ...env, BRAIN_NODE_ID: "node-a" });
  const b = await startNode(db, TOKEN, { ...env, BRAIN_NODE_ID: "node-b" });
  const host = await TestHost.register(as(a), [echo], { hostId: "host-t", secret: "host-t-secret-0001" });
  const id = await sessionWithCall(a, host);
  assert.is((await api(as(a), "POST", `/v1/sessions/${id}/messages`, { text: "go" })).status, 202);
  await host.invoke();
  const exited = new Promise((r) => a.child.once("exit", r));
  a.child.kill("SIGTERM");
  await exited;
  assert.match(a.output(), /stopped/);
  const all = await waitFor(as(b), id, (r) => r.type === "tool.finished", 20_000);
  assert.is(ofType(all, "tool.finished")[0]!.data.status, "unknown");
  assert.equal(await rows(db, "SELECT owner FROM leases WHERE session_id = $1", [id]), [{ owner: "node-b" }]);
});

test.run();
