// A request passed from one node to the session's owner reaches it once (issue 26): a turn longer
// than the lease is not sent again, an owner lost mid-request gives a clear answer and never a second
// execution, and a request held by a stopped owner is answered soon after it runs again. Real
// node subprocesses on a real PostgreSQL server, killed with SIGKILL and stopped with SIGSTOP.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { api, records, waitFor, assertJournal, ofType } from "./helpers/brain.ts";
import type { Brain, Reply } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost } from "./helpers/host.ts";
import { startPgCluster } from "./helpers/pg-cluster.ts";
import type { PgCluster } from "./helpers/pg-cluster.ts";
import { asBrain, kill9, killAll, twoNodes as twoNodesOn } from "./helpers/nodes.ts";

const TOKEN = "forward-operator-token-0001";
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

const as = (n: { url: string }) => asBrain(n, TOKEN) as Brain;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const twoNodes = () => twoNodesOn(cluster.url, `forward_${++databases}`, TOKEN, LEASE_MS);

/** A session owned by `owner` whose one tool call goes to `host`, then answers "done". */
async function session(owner: { url: string }, host: TestHost): Promise<string> {
  const r = await api(as(owner), "POST", "/v1/sessions", { model: { provider: "scripted", script: [{ toolCalls: [{ name: "echo", input: { n: 1 } }] }, { text: "done" }] }, tools: [placed(echo, host.hostId)] });
  assert.is(r.status, 201, JSON.stringify(r.body));
  return r.body.id as string;
}

/** A `wait: true` message, answered whenever it is; `at` is when its answer came. */
function sendWaiting(node: { url: string }, id: string, headers: Record<string, string> = {}): Promise<Reply & { at: number }> {
  return api(as(node), "POST", `/v1/sessions/${id}/messages`, { text: "go", wait: true }, { headers }).then((r) => ({ ...r, at: performance.now() }));
}

/**
 * Two nodes, a host on node A, a session A owns, and a `wait: true` message sent through `via`
 * ("a": the owner itself; "b": the node that passes it on) whose tool call the host has received.
 */
async function runningTurn(via: "a" | "b", hostId: string, headers: Record<string, string> = {}) {
  const { a, b } = await twoNodes();
  const host = await TestHost.register(as(a), [echo], { hostId, secret: `${hostId}-secret-0001` });
  const id = await session(a, host);
  const answer = sendWaiting(via === "a" ? a : b, id, headers);
  const call = await host.invoke();
  return { a, b, host, id, answer, call };
}

test("a wait: true turn longer than the lease, sent through a node that does not own the session, runs once and its client gets the answer", async () => {
  const { a, b, host, id, answer, call } = await runningTurn("b", "host-long");
  // The tool takes more than twice the lease: before, the forwarding node sent the POST again.
  await sleep(LEASE_MS * 2.5);
  assert.is((await host.request({ type: "emit_result", callId: call.callId, outcome: { status: "ok", value: { n: 1 } } })).type, "committed");
  const r = await answer;
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.equal({ status: r.body.status, text: r.body.text }, { status: "completed", text: "done" });
  const all = await records(as(b), id);
  assertJournal(all);
  assert.is(ofType(all, "message.user").length, 1, "one POST, one message");
  assert.is(ofType(all, "turn.started").length, 1);
  assert.is(host.frames.filter((f) => f.type === "invoke").length, 0, "the call was sent once");
  await host.close();
});

test("the owner SIGKILLed under a forwarded wait: true message: a clear 503 saying the outcome is unknown, and no second execution", async () => {
  const { a, b, host, id, answer } = await runningTurn("b", "host-kill");
  await kill9(a.child);
  const r = await answer;
  assert.is(r.status, 503, JSON.stringify(r.body));
  assert.is(r.body.error.code, "unavailable");
  assert.is(r.body.error.retryable, true);
  assert.match(r.body.error.message, /unknown/);
  // B takes the session over: the open call ends unknown, the turn fails; the message ran once.
  const all = await waitFor(as(b), id, (x) => x.type === "turn.failed", LEASE_MS * 10);
  assertJournal(all);
  assert.is(ofType(all, "message.user").length, 1);
  assert.is(ofType(all, "tool.call_started").length, 1);
  assert.is(ofType(all, "tool.finished")[0]!.data.status, "unknown");
  await host.close();
});

test("a wait: true message held by its owner when it is SIGSTOPped past its lease is answered 503 soon after SIGCONT", async () => {
  const { a, b, host, id, answer } = await runningTurn("a", "host-stop");
  a.child.kill("SIGSTOP");
  let resumedAt = 0;
  try {
    await waitFor(as(b), id, (x) => x.type === "turn.failed", LEASE_MS * 10);
  } finally {
    a.child.kill("SIGCONT");
    resumedAt = performance.now();
  }
  const r = await answer;
  // Within one lease beat (a third of the lease) and some slack, not at the client's own timeout.
  assert.ok(r.at - resumedAt < LEASE_MS + 2_000, `answered ${Math.round(r.at - resumedAt)} ms after SIGCONT`);
  assert.is(r.status, 503, JSON.stringify(r.body));
  assert.is(r.body.error.code, "unavailable");
  assert.is(r.body.error.retryable, true);
  const all = await records(as(b), id);
  assertJournal(all);
  assert.is(ofType(all, "message.user").length, 1);
  await host.close();
});

test("a forwarded wait: true message whose owner is SIGSTOPped is answered once the owner's lease ran out, and is not sent again", async () => {
  const { a, b, host, id, answer } = await runningTurn("b", "host-fstop");
  const stoppedAt = performance.now();
  a.child.kill("SIGSTOP");
  let r: Awaited<typeof answer>;
  try {
    r = await answer;
  } finally {
    a.child.kill("SIGCONT");
  }
  assert.ok(r.at - stoppedAt < LEASE_MS * 3 + 2_000, `answered ${Math.round(r.at - stoppedAt)} ms after SIGSTOP`);
  assert.is(r.status, 503, JSON.stringify(r.body));
  assert.match(r.body.error.message, /unknown/);
  const all = await waitFor(as(b), id, (x) => x.type === "turn.failed", LEASE_MS * 10);
  assertJournal(all);
  assert.is(ofType(all, "message.user").length, 1);
  await host.close();
});

test("a keyed wait: true message through a non-owner whose owner is SIGKILLed is passed to the new owner, which runs it at most once: the client gets the first's outcome", async () => {
  const { a, b, host, id, answer } = await runningTurn("b", "host-kkey", { "idempotency-key": "kill-key" });
  await kill9(a.child);
  // B cannot tell whether A journaled the message; the key makes sending it again safe, so B does,
  // once it holds the session (A's lease ran out): the message is found, the turn was interrupted.
  const r = await answer;
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.equal([r.body.status, r.body.error?.code, r.body.error?.retryable], ["failed", "interrupted", true]);
  const all = await records(as(b), id);
  assertJournal(all);
  assert.equal(ofType(all, "message.user").map((m) => m.data.idempotencyKey), ["kill-key"]);
  assert.is(ofType(all, "tool.call_started").length, 1, "the tool ran once");
  await host.close();
});

test("a keyed wait: true message through a non-owner whose owner is SIGSTOPped is answered by the new owner with the first's outcome; the resumed owner writes nothing", async () => {
  const { a, b, host, id, answer } = await runningTurn("b", "host-skey", { "idempotency-key": "stop-key" });
  a.child.kill("SIGSTOP");
  let r: Awaited<typeof answer>;
  try {
    r = await answer;
  } finally {
    a.child.kill("SIGCONT");
  }
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.equal([r.body.status, r.body.error?.code], ["failed", "interrupted"]);
  await sleep(LEASE_MS);
  const all = await records(as(b), id);
  assertJournal(all);
  assert.is(ofType(all, "message.user").length, 1);
  assert.is(ofType(all, "turn.started").length, 1);
  assert.is(ofType(all, "tool.finished").length, 1, "only the takeover's unknown");
  await host.close();
});

test.run();
