// Cost follows work, not history (issue 15), checked by shape, never by timing: the journal says
// each thing once, requests named by reference rebuild exactly (also after a restart), a restart
// reads only the sessions with open work, and paged-out sessions come back when touched.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { startBrain } from "../src/index.ts";
import type { SqliteStore } from "../src/journal/sqlite.ts";
import { chatBody } from "../src/models/openai.ts";
import { api, createSession, records, assertJournal, ofType, waitFor } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost } from "./helpers/host.ts";
import { chatServer } from "./helpers/chat-server.ts";

const lookup = contract("lookup");

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "brain-history-"));
}

/** One turn whose single tool call the host answers with `value` (and `content`, when given). */
async function turnWithCall(brain: Brain, host: TestHost, sessionId: string, text: string, value: unknown, content?: string): Promise<void> {
  const sent = api(brain, "POST", `/v1/sessions/${sessionId}/messages`, { text, wait: true });
  const invoke = await host.invoke();
  const ack = await host.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value }, ...(content === undefined ? {} : { content }) });
  assert.is(ack.type, "committed");
  const end = await sent;
  assert.is(end.body.status, "completed", JSON.stringify(end.body));
}

const occurrences = (haystack: string, needle: string) => haystack.split(needle).length - 1;

test("the journal of a 50-turn session holds each message's content once, and a turn's bytes do not grow with the turn number", async () => {
  const dir = tempDir();
  const brain = await startBrain({ dataDir: dir, port: 0 });
  const host = await TestHost.register(brain, [lookup]);
  try {
    const turns = 50;
    const script = Array.from({ length: turns }, () => [{ toolCalls: [{ name: "lookup", input: {} }] }, { text: "ok" }]).flat();
    const s = await createSession(brain, [placed(lookup, host.hostId)], script);
    for (let t = 1; t <= turns; t++) await turnWithCall(brain, host, s.id, `user-marker-${t}-end`, `value-marker-${t}-end`, `content-marker-${t}-end`);
    const db = (brain.internals.store as SqliteStore).db;
    const text = (db.prepare("SELECT data FROM journal WHERE session_id = ?").all(s.id) as Array<{ data: string }>).map((r) => r.data).join("\n");
    for (let t = 1; t <= turns; t++) {
      assert.is(occurrences(text, `user-marker-${t}-end`), 1, `user message ${t} journaled once`);
      assert.is(occurrences(text, `value-marker-${t}-end`), 1, `result value ${t} journaled once`);
      assert.is(occurrences(text, `content-marker-${t}-end`), 1, `result content ${t} journaled once`);
    }
    // Bytes per turn: the records of turn 5 and of turn 50 (message.user up to turn.completed).
    const all = await records(brain, s.id);
    assertJournal(all);
    const bytesOfTurn = (activation: number) => {
      const start = all.findIndex((r) => r.type === "message.user" && r.data.activation === activation);
      const end = all.findIndex((r, i) => i > start && r.type === "turn.completed");
      return all.slice(start, end + 1).reduce((n, r) => n + JSON.stringify(r).length, 0);
    };
    const early = bytesOfTurn(5);
    const late = bytesOfTurn(50);
    assert.ok(late <= early * 1.1, `turn 50 journaled ${late} bytes, turn 5 ${early}`);
    for (const r of ofType(all, "model.request")) assert.equal(Object.keys(r.data), ["conversation"]);
  } finally {
    await host.close();
    await brain.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the Agentloop's requests rebuild exactly what the provider was sent, before and after a restart, from cache and from the store", async () => {
  const dir = tempDir();
  const turns = 3;
  const replies = Array.from({ length: turns + 1 }, (_, t) => [{ toolCalls: [{ id: `c${t}`, name: "lookup", input: { t } }] }, { text: `answer ${t}` }]).flat();
  const provider = await chatServer(replies);
  const models = { openai: { baseUrl: provider.url, apiKey: "sk-test" } };
  let brain = await startBrain({ dataDir: dir, port: 0, models });
  let host = await TestHost.register(brain, [lookup], { hostId: "h-history", secret: "secret-for-the-history-test" });
  try {
    const created = await api(brain, "POST", "/v1/sessions", { model: { provider: "openai", model: "m" }, system: "be exact", tools: [placed(lookup, host.hostId)] });
    assert.is(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as string;
    // Turns 2 and 3 extend the cached conversation; a background-free tool result with content, one without.
    for (let t = 0; t < turns; t++) await turnWithCall(brain, host, id, `question ${t}`, { n: t }, t % 2 === 0 ? `content ${t}` : undefined);
    const plain = JSON.stringify(await records(brain, id));
    const expanded = JSON.stringify(await records(brain, id, 0, { expand: true }));
    const partial = JSON.stringify(await records(brain, id, 10, { expand: true }));
    await host.close();
    await brain.close();

    brain = await startBrain({ dataDir: dir, port: 0, models, token: brain.token });
    assert.is(JSON.stringify(await records(brain, id)), plain, "events are byte-identical after the restart");
    assert.is(JSON.stringify(await records(brain, id, 0, { expand: true })), expanded, "expanded events too");
    assert.is(JSON.stringify(await records(brain, id, 10, { expand: true })), partial, "and read from the middle");
    assert.equal(JSON.parse(partial), (JSON.parse(expanded) as JournalRecord[]).filter((r) => r.sequence > 10));
    // One more turn after the restart: its conversation is rebuilt from the store, not a cache.
    host = await TestHost.register(brain, [lookup], { hostId: "h-history", secret: "secret-for-the-history-test" });
    await turnWithCall(brain, host, id, `question ${turns}`, { n: turns });

    const all = await records(brain, id, 0, { expand: true });
    assertJournal(all);
    const requests = ofType(all, "model.request");
    assert.is(requests.length, provider.requests.length);
    assert.is(requests.length, (turns + 1) * 2);
    requests.forEach((r, i) => {
      assert.ok(r.data.conversation !== undefined && r.data.request !== undefined);
      assert.equal(chatBody("m", r.data.request!), provider.requests[i], `request ${i + 1} rebuilds what was sent`);
    });
    const last = requests.at(-1)!.data.request!;
    assert.is(last.system, "be exact");
    assert.equal(last.messages.filter((m) => m.role === "user").map((m) => m.content), ["question 0", "question 1", "question 2", "question 3"]);
    assert.equal(last.messages.filter((m) => m.role === "tool").map((m) => m.content), ["content 0", '{"status":"ok","value":{"n":1}}', "content 2", '{"status":"ok","value":{"n":3}}']);
    // The SSE stream expands as well: the backlog and a later commit.
    const res = await fetch(`${brain.url}/v1/sessions/${id}/events?expand=requests`, { headers: { authorization: `Bearer ${brain.token}`, accept: "text/event-stream" } });
    const reader = res.body!.getReader();
    let sse = "";
    while (occurrences(sse, "\nid: ") + (sse.startsWith("id: ") ? 1 : 0) < all.length && !sse.includes(`"sequence":${all.at(-1)!.sequence},`)) {
      const { value, done } = await reader.read();
      if (done) break;
      sse += new TextDecoder().decode(value);
    }
    await reader.cancel();
    assert.ok(sse.includes(JSON.stringify(requests.at(-1))), "the streamed request is the expanded one");
    assert.is((await api(brain, "GET", `/v1/sessions/${id}/events?expand=everything`)).body.error.code, "invalid_request");
  } finally {
    await host.close();
    await brain.close();
    await provider.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a restart reads only the sessions with open work; the others page in when touched", async () => {
  const dir = tempDir();
  let brain = await startBrain({ dataDir: dir, port: 0 });
  const host = await TestHost.register(brain, [lookup], { hostId: "h-open", secret: "secret-for-the-open-work-test" });
  try {
    const idle: string[] = [];
    for (let i = 0; i < 40; i++) {
      const s = await createSession(brain, [], [{ text: `hi ${i}` }]);
      assert.is((await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "hello", wait: true })).body.status, "completed");
      idle.push(s.id);
    }
    const busy: string[] = [];
    for (let i = 0; i < 2; i++) {
      const s = await createSession(brain, [placed(lookup, host.hostId)], [{ toolCalls: [{ name: "lookup", input: {} }] }, { text: "done" }]);
      await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go" });
      await host.invoke();
      busy.push(s.id);
    }
    const busyRecords = (await Promise.all(busy.map((id) => records(brain, id)))).reduce((n, r) => n + r.length, 0);
    const idleBefore = JSON.stringify(await records(brain, idle[7]!));
    await host.kill();
    await brain.close();

    brain = await startBrain({ dataDir: dir, port: 0, token: brain.token });
    const store = brain.internals.store;
    assert.is(brain.internals.sessions.held.resident, 2, "only the two sessions with open calls are in memory");
    assert.is(store.stats.headsLoaded, 2, "only their heads were read");
    assert.is(store.stats.rowsRead, busyRecords, "and only their records");
    for (const id of busy) {
      const all = await records(brain, id);
      assertJournal(all);
      assert.is(ofType(all, "tool.finished")[0]!.data.status, "unknown");
      assert.is(ofType(all, "turn.failed").length, 1);
    }
    // Reading an idle session reads the journal without paging it in; its journal is what it was.
    assert.is(JSON.stringify(await records(brain, idle[7]!)), idleBefore);
    assert.is((await api(brain, "GET", `/v1/sessions/${idle[7]}`)).body.status, "idle");
    assert.is(brain.internals.sessions.held.resident, 2);
    const list = await api(brain, "GET", "/v1/sessions");
    assert.is(list.body.sessions.length, 42, "the list still shows every session");
    assert.is(list.body.sessions[0].id, busy[1], "newest first");
    // A paged-in session continues its activations and script where it stopped.
    const again = await api(brain, "POST", `/v1/sessions/${idle[3]}/messages`, { text: "again", wait: true });
    assert.is(again.body.activation, 2);
    assert.is(again.body.error?.code, "script_exhausted", "its one-step script was used by its first turn");
    assert.is(brain.internals.sessions.held.resident, 3, "a message paged it in");
  } finally {
    await host.close();
    await brain.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("settled sessions beyond the resident limit page out and come back unchanged", async () => {
  const brain = await startBrain({ dataDir: ":memory:", port: 0, residentSessions: 5 });
  try {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const s = await createSession(brain, [], [{ text: `reply ${i}` }, { text: `second ${i}` }]);
      assert.is((await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: `first ${i}`, wait: true })).body.text, `reply ${i}`);
      ids.push(s.id);
    }
    assert.ok(brain.internals.sessions.held.resident <= 5, `resident: ${brain.internals.sessions.held.resident}`);
    for (const [i, id] of ids.entries()) {
      const r = await api(brain, "POST", `/v1/sessions/${id}/messages`, { text: `again ${i}`, wait: true });
      assert.equal([r.body.activation, r.body.text], [2, `second ${i}`], "the script continues at its step");
      assertJournal(await records(brain, id));
    }
    assert.ok(brain.internals.sessions.held.resident <= 5);
  } finally {
    await brain.close();
  }
});

test("with no settled session kept resident, each one still works when touched, and a stream keeps its session resident", async () => {
  const brain = await startBrain({ dataDir: ":memory:", port: 0, residentSessions: 0 });
  try {
    const s = await createSession(brain, [], [{ text: "one" }, { text: "two" }]);
    const res = await fetch(`${brain.url}/v1/sessions/${s.id}/events`, { headers: { authorization: `Bearer ${brain.token}`, accept: "text/event-stream" } });
    const reader = res.body!.getReader();
    assert.is((await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "a", wait: true })).body.text, "one");
    const other = await createSession(brain, [], [{ text: "x" }]);
    assert.is((await api(brain, "POST", `/v1/sessions/${other.id}/messages`, { text: "b", wait: true })).body.text, "x");
    let seen = "";
    while (!seen.includes('"type":"turn.completed"')) seen += new TextDecoder().decode((await reader.read()).value);
    assert.is(brain.internals.sessions.held.resident, 2, "the streamed session stays; the other was just touched");
    await reader.cancel();
    // The server learns of the closed stream when its socket closes, which a loaded machine may take
    // longer than any fixed pause to deliver: wait for the session to have no listener left.
    await waitFor(brain, s.id, () => brain.internals.sessions.residentState(s.id)?.watched !== true);
    assert.is((await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "c", wait: true })).body.text, "two");
    assert.is(brain.internals.sessions.held.resident, 1, "once its stream closed, the other settled session paged out");
  } finally {
    await brain.close();
  }
});

test.run();
