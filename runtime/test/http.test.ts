import { test } from "uvu";
import * as assert from "uvu/assert";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { LIMITS, validate } from "@aexhq/brain-protocol";
import { memoryBrain, api, createSession, records, waitFor, assertJournal, ofType } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost, invalidFrames } from "./helpers/host.ts";
import { LeaseLostError } from "../src/errors.ts";
import { sendError } from "../src/http/respond.ts";

let brain: Brain;
let host: TestHost;
const echo = contract("echo");
const scripted = (script: unknown[] = [{ text: "hello" }]) => ({ provider: "scripted", script });

test.before(async () => {
  // No model providers configured, whatever the machine's environment holds (OPENAI_API_KEY, ...).
  brain = await memoryBrain({ models: {} });
  host = await TestHost.register(brain, [echo]);
});
test.after(async () => {
  await host.close();
  await brain.close();
});

function isErrorBody(r: { body: unknown }, code: string) {
  assert.ok(validate.ErrorBody.Check(r.body), `ErrorBody: ${JSON.stringify(r.body)}`);
  assert.is((r.body as { error: { code: string } }).error.code, code);
}

test("GET /healthz needs no token", async () => {
  const r = await api(brain, "GET", "/healthz", undefined, { token: null });
  assert.is(r.status, 200);
  assert.ok(validate.HealthResponse.Check(r.body));
});

test("a missing or wrong token is 401 with an error body", async () => {
  const none = await api(brain, "GET", "/v1/sessions", undefined, { token: null });
  assert.is(none.status, 401);
  isErrorBody(none, "unauthorized");
  const wrong = await api(brain, "GET", "/v1/sessions", undefined, { token: "nope" });
  assert.is(wrong.status, 401);
  isErrorBody(wrong, "unauthorized");
});

test("a malformed JSON body is 400 malformed_json; an invalid one 400 invalid_request with issues", async () => {
  const bad = await api(brain, "POST", "/v1/sessions", undefined, { raw: "{oops" });
  assert.is(bad.status, 400);
  isErrorBody(bad, "malformed_json");
  const invalid = await api(brain, "POST", "/v1/sessions", { model: { provider: "scripted" }, tools: "no" });
  assert.is(invalid.status, 400);
  isErrorBody(invalid, "invalid_request");
  assert.ok(Array.isArray(invalid.body.error.details) && invalid.body.error.details.length > 0);
});

test("a body over the limit is 413 body_too_large and the server stays up", async () => {
  const big = JSON.stringify({ text: "z".repeat(LIMITS.maxBodyBytes + 10) });
  const r = await api(brain, "POST", "/v1/sessions", undefined, { raw: big });
  assert.is(r.status, 413);
  isErrorBody(r, "body_too_large");
  assert.is((await api(brain, "GET", "/v1/sessions")).status, 200);
});

test("a descriptor Environment the operator did not define is refused unsupported, naming it", async () => {
  const descriptor = await api(brain, "POST", "/v1/sessions", {
    model: scripted(),
    tools: [{ contract: echo, options: {}, placement: { kind: "descriptor", env: "github", descriptor: { type: "http_json" } } }],
  });
  assert.is(descriptor.status, 400);
  isErrorBody(descriptor, "unsupported");
  assert.match(descriptor.body.error.message, /does not run the descriptor environment/);
});

test("providers the operator did not configure are refused unsupported; unknown hosts not_registered; bad digests invalid_request", async () => {
  const real = await api(brain, "POST", "/v1/sessions", { model: { provider: "openai", model: "gpt" }, tools: [] });
  assert.is(real.status, 400);
  isErrorBody(real, "unsupported");
  const nohost = await api(brain, "POST", "/v1/sessions", { model: scripted(), tools: [placed(echo, "nobody-here")] });
  assert.is(nohost.status, 400);
  isErrorBody(nohost, "not_registered");
  const undeclared = contract("undeclared");
  const nodigest = await api(brain, "POST", "/v1/sessions", { model: scripted(), tools: [placed(undeclared, host.hostId)] });
  isErrorBody(nodigest, "not_registered");
  const tampered = { ...echo, inputSchema: { type: "string" } };
  const bad = await api(brain, "POST", "/v1/sessions", { model: scripted(), tools: [placed(tampered, host.hostId)] });
  assert.is(bad.status, 400);
  isErrorBody(bad, "invalid_request");
  const unplaced = await api(brain, "POST", "/v1/sessions", { model: scripted([{ toolCalls: [{ name: "ghost", input: {} }] }]), tools: [] });
  isErrorBody(unplaced, "invalid_request");
});

test("create, get, list, message with wait, delete", async () => {
  const s = await createSession(brain, [placed(echo, host.hostId)], [{ text: "hello there" }], { system: "be brief", deadlineMs: 1000 });
  assert.ok(validate.Session.Check(s));
  assert.is(s.status, "idle");
  assert.is(s.lastSequence, 1);
  const got = await api(brain, "GET", `/v1/sessions/${s.id}`);
  assert.equal(got.body.id, s.id);
  const list = await api(brain, "GET", "/v1/sessions");
  assert.ok(validate.SessionList.Check(list.body));
  assert.ok(list.body.sessions.some((x: { id: string }) => x.id === s.id));
  const sent = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "hi", wait: true });
  assert.is(sent.status, 200);
  assert.ok(validate.SendMessageResponse.Check(sent.body));
  assert.equal(sent.body, { activation: 1, sequence: 2, status: "completed", text: "hello there" });
  const all = await records(brain, s.id);
  assert.equal(all.map((r) => r.type), ["session.created", "message.user", "turn.started", "model.request", "model.response", "model.usage", "turn.completed"]);
  assert.equal(ofType(all, "model.request")[0]!.data, { conversation: { through: 3 } }, "the Agentloop's request names its conversation");
  assert.is(ofType(await records(brain, s.id, 0, { expand: true }), "model.request")[0]!.data.request!.system, "be brief");
  const del = await api(brain, "DELETE", `/v1/sessions/${s.id}`);
  assert.is(del.status, 200);
  assert.is(del.body.status, "deleted");
  const after = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "again" });
  assert.is(after.status, 409);
  isErrorBody(after, "conflict");
  const final = await records(brain, s.id);
  assert.is(final[final.length - 1]!.type, "session.deleted");
  assertJournal(final);
  const missing = await api(brain, "GET", "/v1/sessions/ses_nope");
  assert.is(missing.status, 404);
  isErrorBody(missing, "not_found");
});

test("GET /v1/sessions: 50 a page by default, `next` until the last page, ?cursor continues, ?status from the session's state; a bad cursor or limit is 400", async () => {
  const made = new Set<string>();
  for (let i = 0; i < 52; i++) made.add((await createSession(brain, [], [{ text: "hi" }])).id);
  const first = await api(brain, "GET", "/v1/sessions");
  assert.ok(validate.SessionList.Check(first.body));
  assert.is(first.body.sessions.length, 50, "the default page size");
  assert.type(first.body.next, "string");
  // Every page, 20 at a time: newest first (ties by id), nothing twice, nothing missed; the last page has no next.
  const listed: Array<{ id: string; createdAt: string }> = [];
  let cursor: string | undefined;
  do {
    const page = await api(brain, "GET", `/v1/sessions?limit=20${cursor ? `&cursor=${cursor}` : ""}`);
    assert.is(page.status, 200, JSON.stringify(page.body));
    assert.ok(validate.SessionList.Check(page.body));
    listed.push(...page.body.sessions);
    cursor = page.body.next;
    if (cursor !== undefined) assert.is(page.body.sessions.length, 20);
  } while (cursor !== undefined);
  const ids = listed.map((s) => s.id);
  assert.is(new Set(ids).size, ids.length, "no session twice");
  assert.ok([...made].every((id) => ids.includes(id)), "every session");
  for (let i = 1; i < listed.length; i++) {
    const [a, b] = [listed[i - 1]!, listed[i]!];
    assert.ok(a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id), `newest first: ${a.id} ${a.createdAt} before ${b.id} ${b.createdAt}`);
  }
  // A running turn (an open call) is listed as running, with its open call.
  const busy = await createSession(brain, [placed(echo, host.hostId)], [{ toolCalls: [{ name: "echo", input: {} }] }, { text: "ok" }]);
  await api(brain, "POST", `/v1/sessions/${busy.id}/messages`, { text: "go" });
  const invoke = await host.invoke();
  const running = await api(brain, "GET", "/v1/sessions?status=running");
  assert.equal(running.body.sessions.map((s: { id: string; openCalls: string[] }) => [s.id, s.openCalls]), [[busy.id, [invoke.callId]]]);
  assert.not.ok((await api(brain, "GET", "/v1/sessions?status=idle&limit=1000")).body.sessions.some((s: { id: string }) => s.id === busy.id));
  await host.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value: 1 } });
  await waitFor(brain, busy.id, (r) => r.type === "turn.completed");
  assert.equal((await api(brain, "GET", "/v1/sessions?status=running")).body, { sessions: [] });
  const last = listed.at(-1)!;
  const valid = first.body.next as string;
  for (const bad of ["ses_nope", last.id, "%21%21", `${valid}A`, Buffer.from("[1,2]").toString("base64url"), Buffer.from('[-1,"ses_x"]').toString("base64url"), "", "x".repeat(600)]) {
    const r = await api(brain, "GET", `/v1/sessions?cursor=${bad}`);
    assert.is(r.status, 400, bad);
    isErrorBody(r, "invalid_request");
  }
  for (const bad of ["0", "1001", "1.5", ""]) assert.is((await api(brain, "GET", `/v1/sessions?limit=${bad}`)).status, 400, `limit=${bad}`);
});

test("deleting a session cancels its open calls first", async () => {
  const s = await createSession(brain, [placed(echo, host.hostId)], [{ toolCalls: [{ name: "echo", input: {} }] }]);
  await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go" });
  const invoke = await host.invoke();
  await api(brain, "DELETE", `/v1/sessions/${s.id}`);
  const cancel = await host.next((f) => f.type === "cancel");
  assert.equal(cancel, { type: "cancel", callId: invoke.callId, status: "cancelled" });
  const all = await records(brain, s.id);
  const types = all.map((r) => r.type);
  assert.ok(types.indexOf("tool.finished") < types.indexOf("session.deleted"));
  assertJournal(all);
});

test("when the script runs out the turn fails with script_exhausted", async () => {
  const s = await createSession(brain, [], [{ text: "one" }]);
  await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "a", wait: true });
  const second = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "b", wait: true });
  assert.is(second.body.status, "failed");
  assert.is(second.body.error.code, "script_exhausted");
  const all = await records(brain, s.id);
  assert.is(ofType(all, "turn.failed")[0]!.data.error.code, "script_exhausted");
  assertJournal(all);
});

test("a message while a turn runs is 409 conflict", async () => {
  const s = await createSession(brain, [placed(echo, host.hostId)], [{ toolCalls: [{ name: "echo", input: {} }] }, { text: "ok" }]);
  await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go" });
  const invoke = await host.invoke();
  const busy = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "again" });
  assert.is(busy.status, 409);
  await host.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value: 1 } });
  await waitFor(brain, s.id, (r) => r.type === "turn.completed");
});

function sse(path: string, headers: Record<string, string>, count: number): Promise<Array<{ id: number; data: { sequence: number; type: string } }>> {
  return new Promise((resolve, reject) => {
    const url = new URL(brain.url + path);
    const req = request(url, { headers: { authorization: `Bearer ${brain.token}`, accept: "text/event-stream", ...headers } }, (res) => {
      let buf = "";
      const events: Array<{ id: number; data: { sequence: number; type: string } }> = [];
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        buf += chunk;
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const id = /^id: (\d+)$/m.exec(block);
          const data = /^data: (.*)$/m.exec(block);
          if (id && data) events.push({ id: Number(id[1]), data: JSON.parse(data[1]!) });
          if (events.length >= count) {
            req.destroy();
            resolve(events);
          }
        }
      });
    });
    req.on("error", (e) => (e.message.includes("aborted") || (e as NodeJS.ErrnoException).code === "ECONNRESET" ? undefined : reject(e)));
    req.end();
  });
}

test("events: ?limit pages through a journal (at most limit records after `after`); a bad limit is 400", async () => {
  const session = await createSession(brain, [], [{ text: "one" }, { text: "two" }]);
  for (const text of ["a", "b"]) assert.is((await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text, wait: true })).body.status, "completed");
  const all = await records(brain, session.id);
  const first = await api(brain, "GET", `/v1/sessions/${session.id}/events?after=1&limit=1`);
  assert.equal(first.body.records, [all[1]]);
  assert.is(first.body.records[0].type, "message.user");
  assert.is(first.body.lastSequence, all.length);
  const page = await api(brain, "GET", `/v1/sessions/${session.id}/events?after=3&limit=4`);
  assert.equal(page.body.records.map((r: { sequence: number }) => r.sequence), [4, 5, 6, 7]);
  const tail = await api(brain, "GET", `/v1/sessions/${session.id}/events?after=${all.length - 1}&limit=1000`);
  assert.equal(tail.body.records, [all.at(-1)]);
  for (const bad of ["0", "1001", "x", ""]) {
    const r = await api(brain, "GET", `/v1/sessions/${session.id}/events?limit=${bad}`);
    assert.is(r.status, 400, bad);
    assert.is(r.body.error.code, "invalid_request", bad);
  }
});

test("events stream as SSE (id = sequence), resume from Last-Event-ID, and follow new commits", async () => {
  const s = await createSession(brain, [], [{ text: "one" }, { text: "two" }]);
  await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "a", wait: true });
  const all = await sse(`/v1/sessions/${s.id}/events`, {}, 7);
  assert.equal(all.map((e) => e.id), [1, 2, 3, 4, 5, 6, 7]);
  assert.ok(all.every((e) => e.data.sequence === e.id && validate.JournalRecord.Check(e.data)));
  const resumed = sse(`/v1/sessions/${s.id}/events`, { "last-event-id": "5" }, 4);
  await new Promise((r) => setTimeout(r, 30));
  await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "b" });
  const events = await resumed;
  assert.equal(events.map((e) => e.id), [6, 7, 8, 9], "resumed after 5, then followed the new message");
  assert.is(events[2]!.data.type, "message.user");
  const viaQuery = await sse(`/v1/sessions/${s.id}/events?after=6`, {}, 1);
  assert.is(viaQuery[0]!.id, 7);
  const json = await api(brain, "GET", `/v1/sessions/${s.id}/events?after=3`);
  assert.ok(validate.EventsResponse.Check(json.body));
  assert.is(json.body.records[0].sequence, 4);
});

test("every frame the runtime sent matched its contract def", () => {
  assert.equal(invalidFrames, []);
});

test("a request whose record the fence refused (LeaseLostError, whatever route wrote it: a page-in's recovery, a cancel, a message) is answered 503 unavailable, retryable, naming the session, never 409", async () => {
  const server = createServer((_req, res) => sendError(res, new LeaseLostError("ses_moved")));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    assert.is(res.status, 503);
    const body = (await res.json()) as { error: { code: string; retryable?: boolean; final?: boolean; message: string } };
    assert.is(body.error.code, "unavailable");
    assert.is(body.error.retryable, true);
    assert.is(body.error.final, undefined, "final is for a host's call, not a request to send again");
    assert.ok(body.error.message.includes("ses_moved"), body.error.message);
  } finally {
    server.close();
  }
});

test.run();
