// Tenant limits (issue 32): the operator sets limits per API key over server-wide defaults; a key
// over one is refused with `limit_exceeded` (HTTP 429 + Retry-After, a `rejected` frame to its host,
// an error outcome for a tool call), typed details saying which limit; another key and the operator
// are unaffected. Real runtime, real HTTP and WebSocket on loopback, real SQLite for the restart.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validate } from "@aexhq/brain-protocol";
import type { KeyLimits, LimitExceededDetails } from "@aexhq/brain-protocol";
import { startBrain } from "../src/index.ts";
import { BrainRuntimeError } from "../src/errors.ts";
import { keyLimitsFromEnv } from "../src/config.ts";
import { parseServeArgs } from "../src/cli-flags.ts";
import { memoryBrain, api, waitFor, ofType } from "./helpers/brain.ts";
import type { Brain, Reply } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost } from "./helpers/host.ts";
import { openSse } from "./helpers/streams.ts";

const tool = contract("lookup");
const as = (brain: { url: string }, token: string) => ({ url: brain.url, token });

async function newKey(brain: Brain, name: string, limits?: KeyLimits): Promise<{ id: string; key: string }> {
  const r = await api(brain, "POST", "/v1/keys", { name });
  assert.is(r.status, 201, JSON.stringify(r.body));
  if (limits !== undefined) assert.is((await api(brain, "PATCH", `/v1/keys/${r.body.id}`, { limits })).status, 200);
  return r.body;
}

/** Asserts a typed refusal: 429, Retry-After, a contract ErrorBody whose details name the limit. */
function assertRefused(r: Reply & { retryAfter?: string | null }, limit: string, max: number): void {
  assert.is(r.status, 429, JSON.stringify(r.body));
  assert.ok(validate.ErrorBody.Check(r.body), JSON.stringify(r.body));
  assert.is(r.body.error.code, "limit_exceeded");
  assert.ok(validate.LimitExceededDetails.Check(r.body.error.details), JSON.stringify(r.body.error.details));
  assert.is(r.body.error.details.limit, limit);
  assert.is(r.body.error.details.max, max);
  assert.is(r.body.error.retryable, true);
}

/** One request returning the Retry-After header too. */
async function call(brain: { url: string; token: string }, method: string, path: string, body?: unknown): Promise<Reply & { retryAfter: string | null }> {
  const res = await fetch(brain.url + path, { method, headers: { authorization: `Bearer ${brain.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text === "" ? undefined : JSON.parse(text), retryAfter: res.headers.get("retry-after") };
}

const scripted = (script: unknown[], tools: unknown[] = []) => ({ model: { provider: "scripted", script }, tools });

test("PATCH /v1/keys/:id sets and clears a key's limits over the defaults; bad values are a typed 400; keys cannot set limits", async () => {
  const brain = await memoryBrain({ keyLimits: { streams: 5, requestsPerSecond: 100 } });
  try {
    const a = await newKey(brain, "a");
    const listed = (await api(brain, "GET", "/v1/keys")).body.keys[0];
    assert.ok(validate.ApiKey.Check(listed), JSON.stringify(listed));
    assert.is(listed.limits, undefined, "no limits of its own yet");
    assert.equal(listed.effectiveLimits, { streams: 5, requestsPerSecond: 100 }, "the defaults apply");
    const set = await api(brain, "PATCH", `/v1/keys/${a.id}`, { limits: { sessions: 2, streams: 1 } });
    assert.is(set.status, 200);
    assert.ok(validate.ApiKey.Check(set.body));
    assert.equal(set.body.limits, { sessions: 2, streams: 1 });
    assert.equal(set.body.effectiveLimits, { sessions: 2, streams: 1, requestsPerSecond: 100 });
    const cleared = await api(brain, "PATCH", `/v1/keys/${a.id}`, { limits: { streams: null, journalBytes: 4096 } });
    assert.equal(cleared.body.limits, { sessions: 2, journalBytes: 4096 }, "null removes one, others keep theirs");
    assert.equal(cleared.body.effectiveLimits, { sessions: 2, streams: 5, requestsPerSecond: 100, journalBytes: 4096 });
    for (const bad of [{ limits: { sessions: -1 } }, { limits: { sessions: 1.5 } }, { limits: { sessions: "3" } }, { limits: { requestsPerSecond: 0 } }, { limits: { tokens: 3 } }, {}, { limits: 3 }]) {
      const r = await api(brain, "PATCH", `/v1/keys/${a.id}`, bad);
      assert.is(r.status, 400, JSON.stringify(bad));
      assert.is(r.body.error.code, "invalid_request", JSON.stringify(bad));
      assert.ok(validate.ErrorBody.Check(r.body));
    }
    assert.equal((await api(brain, "GET", "/v1/keys")).body.keys[0].limits, { sessions: 2, journalBytes: 4096 }, "a refused PATCH changed nothing");
    assert.is((await api(brain, "PATCH", "/v1/keys/000000000000", { limits: { sessions: 1 } })).status, 404);
    const byKey = await api(as(brain, a.key), "PATCH", `/v1/keys/${a.id}`, { limits: { sessions: 100 } });
    assert.is(byKey.status, 403, "a key never raises its own limits");
  } finally {
    await brain.close();
  }
});

test("sessions open: a key at its limit gets 429 + Retry-After; deleting one frees a place; another key and the operator are unaffected", async () => {
  const brain = await memoryBrain();
  try {
    const a = await newKey(brain, "a", { sessions: 2 });
    const b = await newKey(brain, "b", { sessions: 2 });
    const first = await api(as(brain, a.key), "POST", "/v1/sessions", scripted([]));
    // Two creations at once for the last place: one is refused, never both admitted.
    const [x, y] = await Promise.all([call(as(brain, a.key), "POST", "/v1/sessions", scripted([])), call(as(brain, a.key), "POST", "/v1/sessions", scripted([]))]);
    assert.equal([x.status, y.status].sort(), [201, 429], "one of two concurrent creations fits");
    const refused = await call(as(brain, a.key), "POST", "/v1/sessions", scripted([]));
    assertRefused(refused, "sessions", 2);
    assert.is(refused.body.error.details.current, 2);
    assert.is(refused.retryAfter, "1");
    assert.is((await api(as(brain, b.key), "POST", "/v1/sessions", scripted([]))).status, 201, "key b has its own count");
    for (let i = 0; i < 3; i++) assert.is((await api(brain, "POST", "/v1/sessions", scripted([]))).status, 201, "the operator is never limited");
    assert.is((await api(as(brain, a.key), "DELETE", `/v1/sessions/${first.body.id}`)).status, 200);
    assert.is((await api(as(brain, a.key), "POST", "/v1/sessions", scripted([]))).status, 201, "a deleted session frees its place");
  } finally {
    await brain.close();
  }
});

test("request rate: over requestsPerSecond a key gets 429 with Retry-After and retryAfterMs; another key's requests pass meanwhile", async () => {
  const brain = await memoryBrain({ keyLimits: { requestsPerSecond: 3 } });
  try {
    const a = await newKey(brain, "a");
    const b = await newKey(brain, "b", { requestsPerSecond: 50 });
    const replies = [];
    for (let i = 0; i < 4; i++) replies.push(await call(as(brain, a.key), "GET", "/v1/sessions"));
    assert.equal(replies.slice(0, 3).map((r) => r.status), [200, 200, 200], "a second's worth passes");
    const refused = replies[3]!;
    assertRefused(refused, "requestsPerSecond", 3);
    assert.ok(refused.body.error.details.retryAfterMs > 0 && refused.body.error.details.retryAfterMs <= 334, String(refused.body.error.details.retryAfterMs));
    assert.is(refused.retryAfter, "1");
    for (let i = 0; i < 10; i++) assert.is((await api(as(brain, b.key), "GET", "/v1/sessions")).status, 200, "key b is not slowed by key a");
    for (let i = 0; i < 10; i++) assert.is((await api(brain, "GET", "/v1/sessions")).status, 200, "the operator is not limited");
    await new Promise((r) => setTimeout(r, refused.body.error.details.retryAfterMs + 20));
    assert.is((await api(as(brain, a.key), "GET", "/v1/sessions")).status, 200, "after the wait a request passes again");
  } finally {
    await brain.close();
  }
});

test("SSE streams: a key at its streams limit gets 429 for another; closing one frees it; another key streams meanwhile", async () => {
  const brain = await memoryBrain();
  const open: Array<{ close(): void }> = [];
  try {
    const a = await newKey(brain, "a", { streams: 1 });
    const b = await newKey(brain, "b", { streams: 1 });
    const sa = (await api(as(brain, a.key), "POST", "/v1/sessions", scripted([]))).body.id;
    const sb = (await api(as(brain, b.key), "POST", "/v1/sessions", scripted([]))).body.id;
    const first = await openSse(`${brain.url}/v1/sessions/${sa}/events`, { authorization: `Bearer ${a.key}` });
    open.push(first);
    assert.is(first.status, 200);
    const second = await openSse(`${brain.url}/v1/sessions/${sa}/events`, { authorization: `Bearer ${a.key}` });
    open.push(second);
    assert.is(second.status, 429);
    await second.ended;
    const body = JSON.parse(second.text);
    assert.is(body.error.code, "limit_exceeded");
    assert.equal(body.error.details, { limit: "streams", max: 1, current: 1 });
    const other = await openSse(`${brain.url}/v1/sessions/${sb}/events`, { authorization: `Bearer ${b.key}` });
    open.push(other);
    assert.is(other.status, 200, "key b's stream opens");
    assert.is((await api(as(brain, a.key), "GET", `/v1/sessions/${sa}/events`)).status, 200, "a one-off read is no stream");
    first.close();
    await first.ended;
    // The server frees the place when it sees the socket close (its listener on the session goes in the
    // same event); a loaded machine may take longer than a fixed pause to deliver that.
    await waitFor(brain, sa, () => brain.internals.sessions.residentState(sa)?.watched !== true);
    const again = await openSse(`${brain.url}/v1/sessions/${sa}/events`, { authorization: `Bearer ${a.key}` });
    open.push(again);
    assert.is(again.status, 200, "a closed stream frees its place");
  } finally {
    for (const s of open) s.close();
    await brain.close();
  }
});

test("calls in flight: a call over the key's limit ends error/limit_exceeded without reaching its host; another key's call is invoked", async () => {
  const brain = await memoryBrain();
  const a = await newKey(brain, "a", { callsInFlight: 1 });
  const b = await newKey(brain, "b", { callsInFlight: 1 });
  const hostA = await TestHost.register(as(brain, a.key), [tool], { hostId: "host-a", secret: "secret-of-host-a-0001" });
  const hostB = await TestHost.register(as(brain, b.key), [tool], { hostId: "host-b", secret: "secret-of-host-b-0001" });
  try {
    // One model step asks for two calls at once: the first is in flight, the second is over the limit.
    const two = scripted([{ toolCalls: [{ name: "lookup", input: { n: 1 } }, { name: "lookup", input: { n: 2 } }] }, { text: "done" }], [placed(tool, "host-a")]);
    const s = await api(as(brain, a.key), "POST", "/v1/sessions", two);
    await api(as(brain, a.key), "POST", `/v1/sessions/${s.body.id}/messages`, { text: "go" });
    const invoked = await hostA.invoke();
    const all = await waitFor(brain, s.body.id, (r) => r.type === "tool.finished");
    const refused = ofType(all, "tool.finished")[0]!;
    assert.is.not(refused.data.callId, invoked.callId);
    assert.is(refused.data.status, "error");
    const error = (refused.data as { error?: { code: string; details?: unknown } }).error!;
    assert.is(error.code, "limit_exceeded");
    assert.equal(error.details, { limit: "callsInFlight", max: 1, current: 1 });
    // Key b's call reaches its host while key a is at its limit.
    const sb = await api(as(brain, b.key), "POST", "/v1/sessions", scripted([{ toolCalls: [{ name: "lookup", input: {} }] }, { text: "b done" }], [placed(tool, "host-b")]));
    const reply = api(as(brain, b.key), "POST", `/v1/sessions/${sb.body.id}/messages`, { text: "go", wait: true });
    const invokedB = await hostB.invoke();
    assert.is((await hostB.request({ type: "finish", callId: invokedB.callId, outcome: { status: "ok", value: 1 } })).type, "committed");
    assert.is((await reply).body.text, "b done");
    // Finishing a's call frees its place: the turn ends and a later call is invoked.
    assert.is((await hostA.request({ type: "finish", callId: invoked.callId, outcome: { status: "ok", value: 1 } })).type, "committed");
    await waitFor(brain, s.body.id, (r) => r.type === "turn.completed");
    const s2 = await api(as(brain, a.key), "POST", "/v1/sessions", scripted([{ toolCalls: [{ name: "lookup", input: {} }] }, { text: "ok" }], [placed(tool, "host-a")]));
    await api(as(brain, a.key), "POST", `/v1/sessions/${s2.body.id}/messages`, { text: "go" });
    const next = await hostA.invoke();
    assert.is((await hostA.request({ type: "finish", callId: next.callId, outcome: { status: "ok", value: 2 } })).type, "committed");
  } finally {
    await hostA.close();
    await hostB.close();
    await brain.close();
  }
});

test("journal bytes: over the limit a host's emit is rejected limit_exceeded (the call goes on and finishes) and a message is 429; another key's session is unaffected", async () => {
  const brain = await memoryBrain();
  const a = await newKey(brain, "a", { journalBytes: 3000 });
  const b = await newKey(brain, "b", { journalBytes: 3000 });
  const hostA = await TestHost.register(as(brain, a.key), [tool], { hostId: "host-a", secret: "secret-of-host-a-0002" });
  const hostB = await TestHost.register(as(brain, b.key), [tool], { hostId: "host-b", secret: "secret-of-host-b-0002" });
  try {
    const body = (hostId: string) => scripted([{ toolCalls: [{ name: "lookup", input: {} }] }, { text: "done" }, { text: "more" }], [placed(tool, hostId)]);
    const s = (await api(as(brain, a.key), "POST", "/v1/sessions", body("host-a"))).body.id;
    await api(as(brain, a.key), "POST", `/v1/sessions/${s}/messages`, { text: "go" });
    const invoked = await hostA.invoke();
    const chunk = "x".repeat(1000);
    let rejected;
    for (let i = 0; i < 10 && rejected === undefined; i++) {
      const answer = await hostA.request({ type: "emit", callId: invoked.callId, kind: "progress", data: { chunk } });
      if (answer.type === "rejected") rejected = answer;
    }
    assert.ok(rejected !== undefined, "an emit is refused once the session holds its limit");
    assert.ok(validate.RejectedFrame.Check(rejected));
    assert.is(rejected.error.code, "limit_exceeded");
    const details = rejected.error.details as LimitExceededDetails;
    assert.ok(validate.LimitExceededDetails.Check(details));
    assert.is(details.limit, "journalBytes");
    assert.is(details.max, 3000);
    assert.ok(details.current >= 3000);
    assert.is((await hostA.request({ type: "finish", callId: invoked.callId, outcome: { status: "ok", value: 1 } })).type, "committed", "the call still finishes");
    await waitFor(brain, s, (r) => r.type === "turn.completed");
    const refused = await call(as(brain, a.key), "POST", `/v1/sessions/${s}/messages`, { text: "again" });
    assertRefused(refused, "journalBytes", 3000);
    assert.is(refused.retryAfter, "1");
    // Key b's session takes its emits meanwhile.
    const sb = (await api(as(brain, b.key), "POST", "/v1/sessions", body("host-b"))).body.id;
    await api(as(brain, b.key), "POST", `/v1/sessions/${sb}/messages`, { text: "go" });
    const callB = await hostB.invoke();
    assert.is((await hostB.request({ type: "emit", callId: callB.callId, kind: "progress", data: { chunk } })).type, "committed");
    assert.is((await hostB.request({ type: "finish", callId: callB.callId, outcome: { status: "ok", value: 1 } })).type, "committed");
    // Raising the limit lets the session go on.
    await api(brain, "PATCH", `/v1/keys/${a.id}`, { limits: { journalBytes: 1_000_000 } });
    assert.is((await api(as(brain, a.key), "POST", `/v1/sessions/${s}/messages`, { text: "again", wait: true })).body.text, "more");
  } finally {
    await hostA.close();
    await hostB.close();
    await brain.close();
  }
});

test("sqlite: a key's limits survive a restart, and a session's journal bytes are counted from the store after it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-limits-"));
  let brain = await startBrain({ dataDir: dir, port: 0, token: "limits-operator-token-0001" });
  try {
    const a = await newKey(brain, "a", { sessions: 5, journalBytes: 3000 });
    const s = (await api(as(brain, a.key), "POST", "/v1/sessions", scripted([{ text: "y".repeat(2000) }, { text: "never" }]))).body.id;
    assert.is((await api(as(brain, a.key), "POST", `/v1/sessions/${s}/messages`, { text: "go", wait: true })).status, 200);
    await brain.close();
    brain = await startBrain({ dataDir: dir, port: 0, token: "limits-operator-token-0001" });
    const listed = (await api(brain, "GET", "/v1/keys")).body.keys[0];
    assert.equal(listed.limits, { sessions: 5, journalBytes: 3000 }, "the limits were read back");
    const refused = await call(as(brain, a.key), "POST", `/v1/sessions/${s}/messages`, { text: "again" });
    assertRefused(refused, "journalBytes", 3000);
    assert.ok(refused.body.error.details.current > 4000, "the bytes journaled before the restart count (the script in session.created and the reply)");
  } finally {
    await brain.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the server-wide defaults come from BRAIN_KEY_MAX_* (and the brain serve flags that set them); a bad value is a typed error", () => {
  assert.equal(keyLimitsFromEnv({}), {});
  assert.equal(
    keyLimitsFromEnv({ BRAIN_KEY_MAX_SESSIONS: "10", BRAIN_KEY_MAX_CALLS_IN_FLIGHT: "4", BRAIN_KEY_MAX_STREAMS: "0", BRAIN_KEY_MAX_REQUESTS_PER_SECOND: "50", BRAIN_KEY_MAX_JOURNAL_BYTES: "1048576" }),
    { sessions: 10, callsInFlight: 4, streams: 0, requestsPerSecond: 50, journalBytes: 1048576 },
  );
  for (const [name, value] of [["BRAIN_KEY_MAX_SESSIONS", "-1"], ["BRAIN_KEY_MAX_SESSIONS", "ten"], ["BRAIN_KEY_MAX_STREAMS", "1.5"], ["BRAIN_KEY_MAX_REQUESTS_PER_SECOND", "0"], ["BRAIN_KEY_MAX_JOURNAL_BYTES", "1e6"]] as const) {
    try {
      keyLimitsFromEnv({ [name]: value });
      assert.unreachable(`${name}=${value} was taken`);
    } catch (e) {
      assert.ok(e instanceof BrainRuntimeError, String(e));
      assert.is(e.code, "invalid_request");
      assert.match(e.message, name);
    }
  }
  assert.equal(parseServeArgs(["--key-max-sessions", "3", "--key-max-requests-per-second=9"]), { help: false, variables: { BRAIN_KEY_MAX_SESSIONS: "3", BRAIN_KEY_MAX_REQUESTS_PER_SECOND: "9" } });
});

test.run();
