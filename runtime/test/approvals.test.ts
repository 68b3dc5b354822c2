// Approvals (issue 31): a call of a tool placed with `approval: "always"` is journaled with the digest
// of its input and dispatched only after a principal allowed on the session approved it, once; a
// denial ends it `approval_denied` with the reason the model reads. A decision names the exact call
// and input, records who made it as the runtime authenticated them, and is made once.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inputDigest } from "@aexhq/brain-protocol";
import type { JournalRecord, PlacedTool, Session, ToolContract } from "@aexhq/brain-protocol";
import { startBrain } from "../src/index.ts";
import { api, assertJournal, createSession, finishedOf, memoryBrain, ofType, records, waitFor } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost, invalidFrames } from "./helpers/host.ts";

let brain: Brain;
const hosts: TestHost[] = [];
const transfer = contract("transfer", { type: "object", properties: { amount: { type: "number" }, to: { type: "string" } } });
const lookup = contract("lookup");

test.before(async () => {
  brain = await memoryBrain();
});
test.after(async () => {
  for (const h of hosts) await h.close();
  await brain.close();
  assert.equal(invalidFrames, []);
});

function gated(c: ToolContract, hostId: string): PlacedTool {
  return { ...placed(c, hostId), approval: "always" };
}

async function host(b: { url: string; token: string } = brain, tools: ToolContract[] = [transfer, lookup], opts: { hostId?: string; secret?: string } = {}): Promise<TestHost> {
  const h = await TestHost.register(b, tools, opts);
  hosts.push(h);
  return h;
}

type Started = Extract<JournalRecord, { type: "tool.call_started" }>;

/** The session's first tool.call_started of `tool`, once committed. */
async function startedOf(b: Brain, id: string, tool = "transfer"): Promise<Started> {
  const all = await waitFor(b, id, (r) => r.type === "tool.call_started" && r.data.tool === tool);
  return ofType(all, "tool.call_started").find((r) => r.data.tool === tool)!;
}

const approval = (b: { url: string; token: string }, id: string, sequence: number | string, body: unknown, token?: string) =>
  api(b, "POST", `/v1/sessions/${id}/calls/${sequence}/approval`, body, token === undefined ? {} : { token });

test("a call awaiting approval is journaled with its input digest and not dispatched; approving it dispatches it exactly once and records who decided", async () => {
  const h = await host();
  const session = await createSession(brain, [gated(transfer, h.hostId)], [{ toolCalls: [{ name: "transfer", input: { to: "acct-9", amount: 120 } }] }, { text: "Sent." }]);
  await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: "Pay acct-9" });
  const started = await startedOf(brain, session.id);
  assert.ok(started.data.approval, "the intent carries the approval request");
  assert.is(started.data.approval!.inputDigest, await inputDigest({ to: "acct-9", amount: 120 }));
  assert.is(started.data.approval!.inputDigest, await inputDigest(started.data.input), "the digest of the input as journaled");
  // Nothing is sent while it waits, and the session says what it waits for.
  await new Promise((r) => setTimeout(r, 150));
  assert.is(h.frames.filter((f) => f.type === "invoke").length, 0, "no invoke before the decision");
  const view = (await api(brain, "GET", `/v1/sessions/${session.id}`)).body as Session;
  assert.equal(view.pendingApprovals, [started.data.callId]);
  assert.equal(view.openCalls, [started.data.callId]);
  assert.is(view.status, "running", "the turn waits for the call");

  const decided = await approval(brain, session.id, started.sequence, { decision: "approve", inputDigest: started.data.approval!.inputDigest, reason: "expected payment" });
  assert.is(decided.status, 200, JSON.stringify(decided.body));
  assert.equal(decided.body, { callId: started.data.callId, decision: "approve", decidedBy: { kind: "operator" }, sequence: decided.body.sequence });
  const invoke = await h.invoke();
  assert.is(invoke.callId, started.data.callId);
  assert.equal(invoke.input, { to: "acct-9", amount: 120 });
  await h.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value: { receipt: "r-1" } } });
  const all = await waitFor(brain, session.id, (r) => r.type === "turn.completed");
  assertJournal(all);
  const mine = all.filter((r) => (r.data as { callId?: string }).callId === started.data.callId).map((r) => r.type);
  assert.equal(mine, ["tool.call_started", "tool.approval_decided", "tool.result", "tool.finished"]);
  const record = ofType(all, "tool.approval_decided")[0]!;
  assert.is(record.sequence, decided.body.sequence);
  assert.equal(record.data, { callId: started.data.callId, decision: "approve", inputDigest: started.data.approval!.inputDigest, decidedBy: { kind: "operator" }, reason: "expected payment" });
  await new Promise((r) => setTimeout(r, 50));
  assert.is(h.frames.filter((f) => f.type === "invoke").length, 0, "dispatched once");
  assert.equal(((await api(brain, "GET", `/v1/sessions/${session.id}`)).body as Session).pendingApprovals, []);
});

test("a denial ends the call error approval_denied without dispatching it; the model reads who denied it and why", async () => {
  const h = await host();
  const session = await createSession(brain, [gated(transfer, h.hostId)], [{ toolCalls: [{ name: "transfer", input: { to: "acct-1", amount: 5 } }] }, { text: "Not sent." }]);
  await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: "Pay acct-1" });
  const started = await startedOf(brain, session.id);
  const decided = await approval(brain, session.id, started.sequence, { decision: "deny", inputDigest: started.data.approval!.inputDigest, reason: "not on Fridays" });
  assert.is(decided.status, 200, JSON.stringify(decided.body));
  const all = await waitFor(brain, session.id, (r) => r.type === "turn.completed");
  const finished = finishedOf(all, started.data.callId);
  assert.is(finished.length, 1);
  assert.is(finished[0]!.data.status, "error");
  assert.is(finished[0]!.data.error!.code, "approval_denied");
  assert.is(finished[0]!.data.error!.message, "the call was denied by the operator: not on Fridays");
  assert.ok(finished[0]!.sequence === decided.body.sequence + 1, "the denial's end follows its decision");
  // The model's next request holds the denial as the call's answer.
  const expanded = await records(brain, session.id, 0, { expand: true });
  const second = ofType(expanded, "model.request")[1]!;
  const answer = second.data.request!.messages.find((m) => m.role === "tool");
  assert.ok(answer?.content.includes("not on Fridays"), JSON.stringify(second.data.request));
  assert.ok(answer?.content.includes("approval_denied"));
  await new Promise((r) => setTimeout(r, 50));
  assert.is(h.frames.filter((f) => f.type === "invoke").length, 0, "never dispatched");
});

test("forged and stale decisions are refused and write nothing: a wrong digest, another call, an unknown sequence, another tenant's key, a second decision, a client-supplied decider", async () => {
  const keyA = await api(brain, "POST", "/v1/keys", { name: "tenant-a" });
  const keyB = await api(brain, "POST", "/v1/keys", { name: "tenant-b" });
  const a = { url: brain.url, token: keyA.body.key as string };
  const h = await host(a);
  const created = await api(a, "POST", "/v1/sessions", {
    model: { provider: "scripted", script: [{ toolCalls: [{ name: "lookup", input: {} }, { name: "transfer", input: { to: "acct-2", amount: 1 } }] }, { text: "done" }] },
    tools: [placed(lookup, h.hostId), gated(transfer, h.hostId)],
  });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  await api(a, "POST", `/v1/sessions/${id}/messages`, { text: "go" });
  const started = await startedOf(brain, id);
  const plain = await startedOf(brain, id, "lookup");
  const digest = started.data.approval!.inputDigest;
  const before = (await records(brain, id)).length;

  const wrong = await approval(a, id, started.sequence, { decision: "approve", inputDigest: await inputDigest({ to: "attacker", amount: 1e6 }) });
  assert.is(wrong.status, 400);
  assert.is(wrong.body.error.code, "digest_mismatch");
  assert.equal(wrong.body.error.details.expected, digest);
  // The right digest on a call that needs no approval.
  const other = await approval(a, id, plain.sequence, { decision: "approve", inputDigest: digest });
  assert.is(other.status, 409);
  assert.is(other.body.error.code, "conflict");
  assert.is(other.body.error.details.state, "no_approval");
  const nowhere = await approval(a, id, 9999, { decision: "approve", inputDigest: digest });
  assert.is(nowhere.status, 404);
  for (const bad of ["0", "-1", "x", "1.5"]) {
    const r = await approval(a, id, bad, { decision: "approve", inputDigest: digest });
    assert.is(r.status, 400, bad);
    assert.is(r.body.error.code, "invalid_request", bad);
  }
  const foreign = await approval(brain, id, started.sequence, { decision: "approve", inputDigest: digest }, keyB.body.key);
  assert.is(foreign.status, 404, "another tenant's key does not see the session");
  assert.is(foreign.body.error.code, "not_found");
  const spoofed = await approval(a, id, started.sequence, { decision: "approve", inputDigest: digest, decidedBy: { kind: "operator" } });
  assert.is(spoofed.status, 400, "who decides is not the client's to say");
  assert.is(spoofed.body.error.code, "invalid_request");
  assert.is((await records(brain, id)).length, before, "nothing was written");
  assert.equal(((await api(a, "GET", `/v1/sessions/${id}`)).body as Session).pendingApprovals, [started.data.callId]);

  const first = await approval(a, id, started.sequence, { decision: "approve", inputDigest: digest });
  assert.is(first.status, 200);
  assert.equal(first.body.decidedBy, { kind: "key", keyId: keyA.body.id, name: "tenant-a" }, "the key that decided, as authenticated");
  const second = await approval(brain, id, started.sequence, { decision: "deny", inputDigest: digest });
  assert.is(second.status, 409);
  assert.is(second.body.error.details.state, "decided");
  assert.is(second.body.error.details.decision, "approve");
  const invokes = [await h.invoke(), await h.invoke()];
  for (const f of invokes) await h.request({ type: "finish", callId: f.callId });
  const all = await waitFor(brain, id, (r) => r.type === "turn.completed");
  assert.is(ofType(all, "tool.approval_decided").length, 1, "one decision");
  // Once ended, the call cannot be decided any more (it is no longer held: the journal answers).
  const late = await approval(a, id, started.sequence, { decision: "approve", inputDigest: digest });
  assert.is(late.status, 409);
  assert.is(late.body.error.details.state, "ended");
});

test("the deadline runs while a call awaits approval: unanswered, it ends timeout, and a later approval is conflict", async () => {
  const h = await host();
  const session = await createSession(brain, [gated(transfer, h.hostId)], [{ toolCalls: [{ name: "transfer", input: { to: "x", amount: 1 }, deadlineMs: 300 }] }, { text: "timed out" }]);
  await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: "go" });
  const started = await startedOf(brain, session.id);
  const all = await waitFor(brain, session.id, (r) => r.type === "turn.completed");
  const end = finishedOf(all, started.data.callId)[0]!;
  assert.is(end.data.status, "timeout");
  assert.is(end.data.message, "the call's deadline passed while it awaited approval");
  const late = await approval(brain, session.id, started.sequence, { decision: "approve", inputDigest: started.data.approval!.inputDigest });
  assert.is(late.status, 409);
  assert.is(late.body.error.code, "conflict");
  assert.is(h.frames.filter((f) => f.type === "invoke").length, 0, "never dispatched");
});

test("cancelling a call awaiting approval ends it cancelled; cancelling the turn ends its waiting calls too; neither can be approved after", async () => {
  const h = await host();
  const session = await createSession(brain, [gated(transfer, h.hostId)], [{ toolCalls: [{ name: "transfer", input: { n: 1 } }] }, { text: "after cancel" }, { toolCalls: [{ name: "transfer", input: { n: 2 } }] }]);
  await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: "one" });
  const first = await startedOf(brain, session.id);
  const cancelled = await api(brain, "POST", `/v1/sessions/${session.id}/cancel`, { callId: first.data.callId });
  assert.equal(cancelled.body, { cancelled: [first.data.callId] });
  await waitFor(brain, session.id, (r) => r.type === "turn.completed");
  assert.is(finishedOf(await records(brain, session.id), first.data.callId)[0]!.data.status, "cancelled");
  const late = await approval(brain, session.id, first.sequence, { decision: "approve", inputDigest: first.data.approval!.inputDigest });
  assert.is(late.status, 409);

  await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: "two" });
  const all = await waitFor(brain, session.id, (r) => r.type === "tool.call_started" && (r.data.input as { n?: number }).n === 2);
  const second = ofType(all, "tool.call_started").at(-1)!;
  const turn = await api(brain, "POST", `/v1/sessions/${session.id}/cancel`, {});
  assert.equal(turn.body, { cancelled: [second.data.callId] });
  const after = await waitFor(brain, session.id, (r) => r.type === "turn.failed");
  assert.is(finishedOf(after, second.data.callId)[0]!.data.status, "cancelled");
  assert.equal(((await api(brain, "GET", `/v1/sessions/${session.id}`)).body as Session).pendingApprovals, []);
  assert.is(h.frames.filter((f) => f.type === "invoke").length, 0);
});

test("an approval survives a runtime restart: the call goes on waiting with its turn, and approving it after the restart dispatches it once", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-approvals-"));
  try {
    const first = await startBrain({ dataDir: dir, port: 0 });
    const ids = { hostId: "approval-restart-host", secret: "approval-restart-secret" };
    const h1 = await host(first, [transfer], ids);
    const session = await createSession(first, [gated(transfer, h1.hostId)], [{ toolCalls: [{ name: "transfer", input: { to: "acct-3", amount: 7 }, deadlineMs: 60_000 }] }, { text: "Paid after the restart." }]);
    await api(first, "POST", `/v1/sessions/${session.id}/messages`, { text: "Pay" });
    const started = await startedOf(first, session.id);
    const before = await records(first, session.id);
    await first.close();
    await h1.closed;

    const second = await startBrain({ dataDir: dir, port: 0, token: first.token });
    try {
      const h2 = await host(second, [transfer], ids);
      const view = (await api(second, "GET", `/v1/sessions/${session.id}`)).body as Session;
      assert.equal(view.pendingApprovals, [started.data.callId], "still waiting after the restart");
      assert.is(view.status, "running", "its turn goes on");
      const now = await records(second, session.id);
      assert.equal(now, before, "recovery wrote nothing: no unknown, no interrupted turn");
      const decided = await approval(second, session.id, started.sequence, { decision: "approve", inputDigest: started.data.approval!.inputDigest });
      assert.is(decided.status, 200, JSON.stringify(decided.body));
      const invoke = await h2.invoke();
      assert.is(invoke.callId, started.data.callId);
      await h2.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value: "paid" } });
      const all = await waitFor(second, session.id, (r) => r.type === "turn.completed");
      assertJournal(all);
      assert.is(ofType(all, "turn.completed")[0]!.data.text, "Paid after the restart.", "the turn that waited ends as the model answers");
      assert.is(ofType(all, "turn.failed").length, 0);
      assert.is(finishedOf(all, started.data.callId)[0]!.data.status, "ok");
      await new Promise((r) => setTimeout(r, 50));
      assert.is(h1.frames.filter((f) => f.type === "invoke").length + h2.frames.filter((f) => f.type === "invoke").length, 0, "dispatched once");
    } finally {
      await second.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
