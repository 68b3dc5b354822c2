// What a long-running server must forget: finished calls (Dispatcher, host connection, old
// activations' budgets) and deleted sessions (only a tombstone stays; records are the store's).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validate } from "@aexhq/brain-protocol";
import { startBrain } from "../src/index.ts";
import type { HostEnvironment } from "../src/environments/host.ts";
import { memoryBrain, api, createSession, records, waitFor, assertJournal, ofType, finishedOf } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost } from "./helpers/host.ts";

let brain: Brain;
const hosts: TestHost[] = [];
const echo = contract("echo");

test.before(async () => {
  brain = await memoryBrain();
});
test.after(async () => {
  for (const h of hosts) await h.close();
  await brain.close();
});

const track = (h: TestHost) => (hosts.push(h), h);
const err = (f: unknown) => (f as { error: { code: string } }).error.code;
const hostEnv = (b: Brain) => b.internals.environments.get("host") as HostEnvironment;

/** Script of `n` steps of one echo call each, then a final answer. */
const calls = (n: number) => [...Array.from({ length: n }, (_, i) => ({ toolCalls: [{ name: "echo", input: { i } }] })), { text: "done" }];

test("finished calls are forgotten by the dispatcher and the host connection", async () => {
  const host = track(await TestHost.register(brain, [echo]));
  const session = await createSession(brain, [placed(echo, host.hostId)], calls(20));
  await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: "go" });
  for (let i = 0; i < 20; i++) {
    const invoke = await host.invoke();
    const r = await host.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value: i } });
    assert.is(r.type, "committed");
  }
  const all = await waitFor(brain, session.id, (r) => r.type === "turn.completed");
  assertJournal(all);
  assert.is(ofType(all, "tool.finished").length, 20);
  assert.is(brain.internals.sessions.held.calls, 0, "no finished call held by its session");
  assert.is(hostEnv(brain).connection(host.hostId)!.trackedCalls, 0, "no finished call tracked by the connection");
});

test("a late frame for a forgotten call is rejected call_finished; another host's is forbidden; a never-started one unknown_call", async () => {
  const owner = track(await TestHost.register(brain, [echo]));
  const intruder = track(await TestHost.register(brain, [echo]));
  const session = await createSession(brain, [placed(echo, owner.hostId)], calls(1));
  await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: "go" });
  const invoke = await owner.invoke();
  await owner.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value: 1 } });
  await waitFor(brain, session.id, (r) => r.type === "turn.completed");
  assert.is(brain.internals.dispatcher.getCall(invoke.callId), undefined, "the call is forgotten");
  for (const frame of [
    { type: "emit", callId: invoke.callId, kind: "late", data: 1 },
    { type: "emit_result", callId: invoke.callId, outcome: { status: "ok", value: 2 } },
    { type: "returned", callId: invoke.callId },
    { type: "finish", callId: invoke.callId },
  ]) {
    const late = await owner.request(frame);
    assert.is(late.type, "rejected", frame.type);
    assert.is(err(late), "call_finished", frame.type);
  }
  assert.is(err(await intruder.request({ type: "emit", callId: invoke.callId, kind: "k", data: 1 })), "forbidden");
  // Sequence 1 exists but is session.created, not a call; 999 does not exist.
  assert.is(err(await owner.request({ type: "emit", callId: `${session.id}:1`, kind: "k", data: 1 })), "unknown_call");
  assert.is(err(await owner.request({ type: "emit", callId: `${session.id}:999`, kind: "k", data: 1 })), "unknown_call");
  const all = await records(brain, session.id);
  assert.is(ofType(all, "tool.event").length, 0, "nothing late was journaled");
  assert.is(finishedOf(all, invoke.callId).length, 1);
});

test("calls ended runtime-side (timeout, cancel) are forgotten too", async () => {
  const host = track(await TestHost.register(brain, [echo]));
  const session = await createSession(brain, [placed(echo, host.hostId)], [{ toolCalls: [{ name: "echo", input: {}, deadlineMs: 50 }] }, { text: "done" }]);
  await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: "go" });
  const invoke = await host.invoke();
  await host.next((f) => f.type === "cancel");
  await waitFor(brain, session.id, (r) => r.type === "turn.completed");
  assert.is(brain.internals.dispatcher.getCall(invoke.callId), undefined);
  assert.is(hostEnv(brain).connection(host.hostId)!.trackedCalls, 0);
  assert.is(err(await host.request({ type: "finish", callId: invoke.callId })), "call_finished");

  const s2 = await createSession(brain, [placed(echo, host.hostId)], calls(1));
  await api(brain, "POST", `/v1/sessions/${s2.id}/messages`, { text: "go" });
  const i2 = await host.invoke();
  assert.equal((await api(brain, "POST", `/v1/sessions/${s2.id}/cancel`, { callId: i2.callId })).body, { cancelled: [i2.callId] });
  await waitFor(brain, s2.id, (r) => r.type === "turn.completed");
  assert.is(brain.internals.dispatcher.getCall(i2.callId), undefined);
  assert.equal((await api(brain, "POST", `/v1/sessions/${s2.id}/cancel`, { callId: i2.callId })).body, { cancelled: [] }, "cancelling a forgotten call ends nothing");
  assert.is(hostEnv(brain).connection(host.hostId)!.trackedCalls, 0);
});

test("emission budgets of finished activations are dropped", async () => {
  const host = track(await TestHost.register(brain, [echo]));
  const script = Array.from({ length: 6 }, () => [{ toolCalls: [{ name: "echo", input: {} }] }, { text: "ok" }]).flat();
  const session = await createSession(brain, [placed(echo, host.hostId)], script);
  const before = brain.internals.sessions.held.budgets;
  for (let a = 0; a < 6; a++) {
    const sent = api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: `turn ${a}`, wait: true });
    const invoke = await host.invoke();
    await host.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value: a } });
    assert.is((await sent).body.status, "completed");
  }
  assert.ok(brain.internals.sessions.held.budgets - before <= 1, `at most the latest activation's budget is held (${brain.internals.sessions.held.budgets - before})`);
});

test("a deleted session is forgotten: the store's head answers GET and list, its journal stays readable, late frames are call_finished", async () => {
  const host = track(await TestHost.register(brain, [echo]));
  const session = await createSession(brain, [placed(echo, host.hostId)], calls(1));
  await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: "go" });
  const invoke = await host.invoke();
  const held = brain.internals.sessions.held;
  const del = await api(brain, "DELETE", `/v1/sessions/${session.id}`);
  assert.is(del.status, 200);
  assert.is(del.body.status, "deleted");
  assert.is(brain.internals.sessions.held.resident, held.resident - 1, "nothing of the deleted session stays in memory");
  assert.is(await brain.internals.sessions.state(session.id).then(() => "paged in", (e: { code?: string }) => e.code), "conflict");
  const got = await api(brain, "GET", `/v1/sessions/${session.id}`);
  assert.is(got.status, 200);
  assert.ok(validate.Session.Check(got.body));
  assert.is(got.body.status, "deleted");
  assert.equal(got.body.openCalls, []);
  assert.equal(got.body.tools, session.tools);
  const list = await api(brain, "GET", "/v1/sessions");
  assert.is(list.body.sessions.find((x: { id: string }) => x.id === session.id)?.status, "deleted");
  const all = await records(brain, session.id);
  assertJournal(all);
  assert.is(all.at(-1)!.type, "session.deleted");
  assert.is(got.body.lastSequence, all.at(-1)!.sequence);
  assert.is(finishedOf(all, invoke.callId)[0]!.data.status, "cancelled");
  assert.is((await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: "again" })).status, 409);
  assert.is((await api(brain, "POST", `/v1/sessions/${session.id}/cancel`, {})).status, 409);
  assert.is((await api(brain, "DELETE", `/v1/sessions/${session.id}`)).status, 409);
  await host.next((f) => f.type === "cancel");
  assert.is(err(await host.request({ type: "finish", callId: invoke.callId })), "call_finished");
  // SSE of a deleted session replays its journal and ends at session.deleted.
  const res = await fetch(`${brain.url}/v1/sessions/${session.id}/events`, { headers: { authorization: `Bearer ${brain.token}`, accept: "text/event-stream" } });
  const text = await res.text();
  assert.is(text.match(/^id: /gm)?.length, all.length);
});

test("sqlite: a deleted session is not loaded by a restart and its records are read from disk", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-leaks-"));
  try {
    let b = await startBrain({ dataDir: dir, port: 0 });
    const s = await createSession(b, [], [{ text: "hi" }]);
    await api(b, "POST", `/v1/sessions/${s.id}/messages`, { text: "a", wait: true });
    await api(b, "DELETE", `/v1/sessions/${s.id}`);
    const before = await records(b, s.id);
    await b.close();
    b = await startBrain({ dataDir: dir, port: 0, token: b.token });
    try {
      assert.equal(b.internals.sessions.held.resident, 0);
      assert.is((await api(b, "GET", `/v1/sessions/${s.id}`)).body.status, "deleted");
      assert.equal(await records(b, s.id), before);
    } finally {
      await b.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
