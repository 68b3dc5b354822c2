// Idempotency keys on POST /v1/sessions/:id/messages, the bound on a waiting request, the answer a
// waiting request gets when its node stops running the session, and the `interrupted` turn end of a
// restart (issue 26). A real runtime on loopback; SQLite where a journal must outlive the process
// or a session must page out and back in.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validate } from "@aexhq/brain-protocol";
import { startBrain } from "../src/index.ts";
import type { BrainOptions } from "../src/index.ts";
import { createSession, memoryBrain, ofType, records, waitFor, assertJournal } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost, invalidFrames } from "./helpers/host.ts";
import { within } from "./helpers/provider-server.ts";

const slow = contract("slow");
const dirs: string[] = [];

interface Answer {
  status: number;
  body: any;
  replayed: boolean;
}

/** POST …/messages with an optional Idempotency-Key (`null`: none); `replayed` is the Idempotent-Replayed header. */
async function message(brain: { url: string; token: string }, id: string, body: { text: string; wait?: boolean }, key: string | null): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${brain.token}`, "content-type": "application/json" };
  if (key !== null) headers["idempotency-key"] = key;
  const res = await fetch(`${brain.url}/v1/sessions/${id}/messages`, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text), replayed: res.headers.get("idempotent-replayed") === "true" };
}

function sqliteDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "brain-idem-"));
  dirs.push(dir);
  return dir;
}

const sqliteBrain = (dataDir: string, opts: BrainOptions = {}) => startBrain({ dataDir, port: 0, models: {}, ...opts });

const messagesOf = async (brain: Brain, id: string) => ofType(await records(brain, id), "message.user");

test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test("the same key twice starts one turn: the repeat is answered from the first (no wait and wait), with Idempotent-Replayed", async () => {
  const brain = await memoryBrain({ models: {} });
  try {
    const s = await createSession(brain, [], [{ text: "first answer" }, { text: "second answer" }]);
    const a = await message(brain, s.id, { text: "hello" }, "key-no-wait");
    assert.equal([a.status, a.replayed, a.body.status], [202, false, "started"]);
    const b = await message(brain, s.id, { text: "hello" }, "key-no-wait");
    assert.equal([b.status, b.replayed, b.body], [202, true, a.body], "the first's activation and sequence");
    assert.ok(validate.SendMessageResponse.Check(b.body));
    // With wait: the first activation's turn end, however often asked.
    const c = await message(brain, s.id, { text: "hello" }, "key-no-wait");
    assert.is(c.replayed, true);
    const waited = await message(brain, s.id, { text: "hello", wait: true }, "key-no-wait");
    assert.equal([waited.status, waited.replayed, waited.body], [200, true, { activation: 1, sequence: a.body.sequence, status: "completed", text: "first answer" }]);

    const d = await message(brain, s.id, { text: "again", wait: true }, "key-wait");
    assert.equal([d.status, d.replayed, d.body.status, d.body.text, d.body.activation], [200, false, "completed", "second answer", 2]);
    const e = await message(brain, s.id, { text: "again", wait: true }, "key-wait");
    assert.equal([e.status, e.replayed, e.body], [200, true, d.body]);

    const messages = await messagesOf(brain, s.id);
    assert.equal(messages.map((m) => [m.data.text, m.data.idempotencyKey]), [["hello", "key-no-wait"], ["again", "key-wait"]], "one message.user per key, the key journaled");
    assertJournal(await records(brain, s.id));
    // A message without a key is never a repeat.
    const f = await message(brain, s.id, { text: "no key", wait: true }, null);
    assert.equal([f.status, f.replayed, f.body.activation], [200, false, 3]);
  } finally {
    await brain.close();
  }
});

test("concurrent requests with one key start one turn; every one gets the turn's end", async () => {
  const brain = await memoryBrain({ models: {} });
  try {
    const s = await createSession(brain, [], [{ text: "only once" }, { text: "a second turn (must not run)" }]);
    const answers = await Promise.all(Array.from({ length: 8 }, () => message(brain, s.id, { text: "go", wait: true }, "same-key")));
    for (const a of answers) assert.equal([a.status, a.body.status, a.body.text, a.body.activation], [200, "completed", "only once", 1], JSON.stringify(a));
    assert.is(answers.filter((a) => !a.replayed).length, 1, "one first, seven replays");
    assert.is((await messagesOf(brain, s.id)).length, 1);
    // Concurrent without wait, on a session that is running nothing: still one.
    const more = await Promise.all(Array.from({ length: 8 }, () => message(brain, s.id, { text: "go on" }, "other-key")));
    assert.ok(more.every((a) => a.status === 202 && a.body.activation === 2), JSON.stringify(more));
    assert.is((await messagesOf(brain, s.id)).length, 2);
  } finally {
    await brain.close();
  }
});

test("a key used again with another text is 400 invalid_request, and a malformed key is 400; neither journals anything", async () => {
  const brain = await memoryBrain({ models: {} });
  try {
    const s = await createSession(brain, [], [{ text: "ok" }]);
    assert.is((await message(brain, s.id, { text: "one", wait: true }, "k1")).status, 200);
    const other = await message(brain, s.id, { text: "two" }, "k1");
    assert.is(other.status, 400);
    assert.ok(validate.ErrorBody.Check(other.body));
    assert.is(other.body.error.code, "invalid_request");
    assert.match(other.body.error.message, /Idempotency-Key "k1" was already used on session .* for another message/);
    for (const bad of ["", "has space", "x".repeat(256), "tab\there", "é"]) {
      const r = await fetch(`${brain.url}/v1/sessions/${s.id}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${brain.token}`, "content-type": "application/json", "idempotency-key": bad },
        body: JSON.stringify({ text: "one" }),
      });
      const body = (await r.json()) as { error: { code: string; message: string } };
      assert.is(r.status, 400, JSON.stringify(bad));
      assert.is(body.error.code, "invalid_request");
      assert.match(body.error.message, /Idempotency-Key must be 1 to 255 visible ASCII characters/);
    }
    // 255 visible characters is a key.
    const longest = "~".repeat(255);
    const kept = await message(brain, s.id, { text: "longest" }, longest);
    assert.equal([kept.status, kept.body.activation], [202, 2]);
    assert.equal((await messagesOf(brain, s.id)).map((m) => m.data.idempotencyKey), ["k1", longest], "nothing journaled for the refused requests");
  } finally {
    await brain.close();
  }
});

test("after a restart on the same SQLite data folder a key still names its message: the repeat is replayed, and a turn the restart cut short ended `interrupted`", async () => {
  const dataDir = sqliteDir();
  let brain = await sqliteBrain(dataDir);
  let host = await TestHost.register(brain, [slow], { hostId: "idem-restart-host", secret: "idem-restart-secret" });
  try {
    const s = await createSession(brain, [placed(slow, host.hostId)], [{ text: "done before" }, { toolCalls: [{ name: "slow", input: {} }] }, { text: "never" }]);
    const done = await message(brain, s.id, { text: "one", wait: true }, "before-restart");
    assert.equal([done.status, done.body.text], [200, "done before"]);
    // A second turn still running (its tool call open) when the runtime goes down.
    const running = await message(brain, s.id, { text: "two" }, "cut-short");
    assert.is(running.status, 202);
    await host.invoke();
    await host.close();
    await brain.close();

    brain = await sqliteBrain(dataDir, { token: brain.token });
    const again = await message(brain, s.id, { text: "one", wait: true }, "before-restart");
    assert.equal([again.status, again.replayed, again.body], [200, true, done.body]);
    const cut = await message(brain, s.id, { text: "two", wait: true }, "cut-short");
    assert.equal([cut.status, cut.replayed, cut.body.activation, cut.body.status], [200, true, 2, "failed"]);
    assert.equal(cut.body.error, { code: "interrupted", message: cut.body.error.message, retryable: true });
    assert.match(cut.body.error.message, /restarted/);
    assert.is((await message(brain, s.id, { text: "other text" }, "cut-short")).status, 400, "the journal keeps the key's text too");
    const all = await records(brain, s.id);
    assertJournal(all);
    assert.equal(ofType(all, "message.user").map((m) => m.data.idempotencyKey), ["before-restart", "cut-short"]);
    assert.equal(ofType(all, "turn.failed").map((r) => [r.data.activation, r.data.error.code, r.data.error.retryable]), [[2, "interrupted", true]]);
  } finally {
    await brain.close();
  }
});

test("a session paged out (residentSessions: 1) finds its keys in the SQLite journal", async () => {
  const brain = await sqliteBrain(sqliteDir(), { residentSessions: 1 });
  try {
    const a = await createSession(brain, [], [{ text: "a's answer" }, { text: "must not run" }]);
    const first = await message(brain, a.id, { text: "hi", wait: true }, "paged-key");
    assert.is(first.status, 200);
    const b = await createSession(brain, [], [{ text: "b's answer" }]);
    assert.is((await message(brain, b.id, { text: "hi", wait: true }, "paged-key")).replayed, false, "keys are per session");
    assert.not.ok(brain.internals.sessions.isResident(a.id), "a paged out");
    const replay = await message(brain, a.id, { text: "hi", wait: true }, "paged-key");
    assert.equal([replay.status, replay.replayed, replay.body], [200, true, first.body]);
    const noWait = await message(brain, a.id, { text: "hi" }, "paged-key");
    assert.equal([noWait.status, noWait.replayed, noWait.body], [202, true, { activation: 1, sequence: first.body.sequence, status: "started" }]);
    assert.is((await messagesOf(brain, a.id)).length, 1);
  } finally {
    await brain.close();
  }
});

test("a waiting request is held at most maxWaitMs: then 202 started, and asking again with the key gets the turn's end", async () => {
  const brain = await memoryBrain({ models: {}, maxWaitMs: 300 });
  const host = await TestHost.register(brain, [slow]);
  try {
    const s = await createSession(brain, [placed(slow, host.hostId)], [{ toolCalls: [{ name: "slow", input: {} }] }, { text: "slow done" }, { text: "must not run" }]);
    const t0 = performance.now();
    const first = await message(brain, s.id, { text: "go", wait: true }, "bounded");
    const held = performance.now() - t0;
    assert.equal([first.status, first.replayed, first.body.status, first.body.activation], [202, false, "started", 1]);
    assert.ok(held >= 250 && held < 2000, `held ${held} ms`);
    const invoke = await host.invoke();
    // Still running: the repeat waits the bound again.
    const second = await message(brain, s.id, { text: "go", wait: true }, "bounded");
    assert.equal([second.status, second.replayed, second.body], [202, true, first.body]);
    // The tool finishes while a repeat waits: that repeat gets the end.
    const third = message(brain, s.id, { text: "go", wait: true }, "bounded");
    await new Promise((r) => setTimeout(r, 50));
    assert.is((await host.request({ type: "finish", callId: invoke.callId })).type, "committed");
    const end = await third;
    assert.equal([end.status, end.replayed, end.body.status, end.body.text, end.body.sequence], [200, true, "completed", "slow done", first.body.sequence]);
    assert.is((await messagesOf(brain, s.id)).length, 1);
    // A session nobody waits on any more is free to page out (the bound's listener is gone).
    assert.not.ok((await brain.internals.sessions.state(s.id)).watched);
  } finally {
    await host.close();
    await brain.close();
  }
});

test("a session this node stops running answers its waiting requests at once with 503 unavailable (evicted, then shut down)", async () => {
  const brain = await memoryBrain({ models: {} });
  const host = await TestHost.register(brain, [slow]);
  try {
    const s = await createSession(brain, [placed(slow, host.hostId)], [{ toolCalls: [{ name: "slow", input: {} }] }, { text: "never" }]);
    const waiting = message(brain, s.id, { text: "go", wait: true }, "evicted");
    await host.invoke();
    const replay = message(brain, s.id, { text: "go", wait: true }, "evicted");
    await waitFor(brain, s.id, () => brain.internals.sessions.residentState(s.id)?.watched === true);
    const t0 = performance.now();
    // What a node does when it finds it lost the session's lease (cluster/node.ts).
    brain.internals.sessions.evict(s.id);
    for (const r of await within(Promise.all([waiting, replay]), 2000, "waiting requests answered")) {
      assert.is(r.status, 503);
      assert.ok(validate.ErrorBody.Check(r.body));
      assert.equal([r.body.error.code, r.body.error.retryable], ["unavailable", true]);
      assert.match(r.body.error.message, /stopped running the session .*the turn's outcome is unknown here; send the request again with the same Idempotency-Key/);
    }
    assert.ok(performance.now() - t0 < 1000, "at once");
  } finally {
    await host.close();
    await brain.close();
  }
  const other = await memoryBrain({ models: {} });
  const host2 = await TestHost.register(other, [slow]);
  try {
    const s = await createSession(other, [placed(slow, host2.hostId)], [{ toolCalls: [{ name: "slow", input: {} }] }, { text: "never" }]);
    const waiting = message(other, s.id, { text: "go", wait: true }, "shutdown");
    await host2.invoke();
    const closed = other.close();
    const r = await within(waiting, 2000, "the waiting request answered at shutdown");
    assert.equal([r.status, r.body.error.code, r.body.error.retryable], [503, "unavailable", true]);
    assert.match(r.body.error.message, /shutting down/);
    await closed;
  } finally {
    await host2.close();
    await other.close();
  }
});

test("deleting a session answers its waiting request with the turn's cancellation, not 503 (the end is committed before the session leaves memory)", async () => {
  const brain = await memoryBrain({ models: {} });
  const host = await TestHost.register(brain, [slow]);
  try {
    const s = await createSession(brain, [placed(slow, host.hostId)], [{ toolCalls: [{ name: "slow", input: {} }] }, { text: "never" }]);
    const waiting = message(brain, s.id, { text: "go", wait: true }, "deleted");
    await host.invoke();
    const del = await fetch(`${brain.url}/v1/sessions/${s.id}`, { method: "DELETE", headers: { authorization: `Bearer ${brain.token}` } });
    assert.is(del.status, 200);
    const r = await within(waiting, 2000, "the waiting request answered");
    assert.equal([r.status, r.body.status, r.body.error?.code], [200, "failed", "cancelled"]);
    // The key still names its message on the deleted session (read from the journal).
    const again = await message(brain, s.id, { text: "go", wait: true }, "deleted");
    assert.equal([again.status, again.replayed, again.body], [200, true, r.body]);
  } finally {
    await host.close();
    await brain.close();
  }
});

test("every frame the runtime sent matched its contract def", () => {
  assert.equal(invalidFrames, []);
});

test.run();
