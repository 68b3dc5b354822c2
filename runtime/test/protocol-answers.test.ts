// Every answer contract/PROTOCOL.md documents for a host frame (x-brain-answers in the schema) and
// every close code it lists (x-brain-close-codes), observed on a real WebSocket against a real
// runtime. The last test fails when a documented answer was not observed here, or when this file
// observes one the contract does not document: the document and the server cannot drift apart.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { WebSocket } from "ws";
import { LIMITS, PROTOCOL } from "@aexhq/brain-protocol";
import type { RuntimeToHostFrame, ScriptStep } from "@aexhq/brain-protocol";
import { memoryBrain, api, createSession, records, waitFor } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost } from "./helpers/host.ts";
import { startPgCluster } from "./helpers/pg-cluster.ts";
import type { PgCluster } from "./helpers/pg-cluster.ts";
import { freshDatabase, kill9, killAll, queryRows as sql, startNode } from "./helpers/nodes.ts";
import type { NodeProcess } from "./helpers/nodes.ts";

interface Answer { answer: string; code?: string; when: string }
const schema = JSON.parse(readFileSync(new URL("../../contract/protocol.schema.json", import.meta.url), "utf8")) as {
  "x-brain-close-codes": { code: number }[];
  $defs: Record<string, { "x-brain-kind": string; properties?: { type?: { const?: string } }; "x-brain-answers"?: Answer[] }>;
};
const documented = new Set<string>();
// Host frames only: the node-to-node link messages (x-brain-kind "link") list their answers too, but no host sees them.
for (const def of Object.values(schema.$defs).filter((d) => d["x-brain-kind"] === "frame")) {
  for (const a of def["x-brain-answers"] ?? []) documented.add(`${def.properties!.type!.const} ${a.answer}${a.code ? ` ${a.code}` : ""}`);
}
const documentedCloses = new Set(schema["x-brain-close-codes"].map((c) => c.code));
const observed = new Set<string>();
const observedCloses = new Set<number>();

const tool = contract("t");
const toolCall: ScriptStep[] = [{ toolCalls: [{ name: "t", input: {} }] }, { text: "done" }];
let brain: Brain;
let budgetBrain: Brain;
const sockets: TestHost[] = [];
let lateRegister: TestHost;
let lateRegisterOpened = 0;

test.before(async () => {
  brain = await memoryBrain();
  budgetBrain = await memoryBrain({ maxEmittedBytes: 100, maxModelCalls: 1 });
  // Opened first so the 10 s register timeout runs while the other tests do.
  lateRegister = await TestHost.connect(brain.url);
  lateRegisterOpened = Date.now();
});
test.after(async () => {
  for (const s of sockets) await s.close();
  await lateRegister.close();
  await brain.close();
  await budgetBrain.close();
  await killAll();
  await pgCluster?.stop();
});

const track = (h: TestHost) => (sockets.push(h), h);

type HostFrameType = "emit" | "emit_result" | "returned" | "finish" | "model_request" | "environment_request";
const FRAME: Record<HostFrameType, (callId: string) => Record<string, unknown>> = {
  emit: (callId) => ({ type: "emit", callId, kind: "k", data: { n: 1 } }),
  emit_result: (callId) => ({ type: "emit_result", callId, outcome: { status: "ok", value: 1 } }),
  returned: (callId) => ({ type: "returned", callId }),
  finish: (callId) => ({ type: "finish", callId }),
  model_request: (callId) => ({ type: "model_request", callId, request: { messages: [{ role: "user", content: "hi" }] } }),
  environment_request: (callId) => ({ type: "environment_request", callId, request: { operation: "list" } }),
};
const FRAME_TYPES = Object.keys(FRAME) as HostFrameType[];

/** Sends `frame` with a fresh ref and resolves with the one frame that answers that ref. */
async function send(host: TestHost, frame: Record<string, unknown>): Promise<RuntimeToHostFrame> {
  const ref = host.nextRef();
  host.sendRaw(JSON.stringify({ ...frame, ref }));
  return host.next((f) => "ref" in f && f.ref === ref);
}

/**
 * Records the answer as observed after checking it is the expected one. `final` (ErrorInfo.final)
 * is checked on every refusal: `true` for `call_finished` and where the caller says the call is
 * over, absent everywhere else (the call goes on).
 */
function expectAnswer(frameType: string, answer: RuntimeToHostFrame, type: string, code?: string, documentedCode = code, final = code === "call_finished"): void {
  const got = answer as { type: string; error?: { code: string; final?: boolean } };
  assert.is(got.type, type, `${frameType}: ${JSON.stringify(answer)}`);
  assert.is(got.error?.code, code, `${frameType}: ${JSON.stringify(answer)}`);
  if (got.error !== undefined && type !== "error") assert.is(got.error.final, final ? true : undefined, `${frameType}: final: ${JSON.stringify(answer)}`);
  observed.add(`${frameType} ${type}${documentedCode ? ` ${documentedCode}` : ""}`);
}
/** What a call-scoped frame's answer type is: model_request is answered model_result, environment_request environment_result, the rest committed/rejected. */
const refused = (t: HostFrameType) => (t === "model_request" ? "model_result" : t === "environment_request" ? "environment_result" : "rejected");

async function openCall(b: Brain, script: ScriptStep[] = toolCall): Promise<{ host: TestHost; callId: string; sessionId: string }> {
  const host = track(await TestHost.register(b, [tool]));
  const session = await createSession(b, [placed(tool, host.hostId)], script);
  await api(b, "POST", `/v1/sessions/${session.id}/messages`, { text: "go" });
  const invoke = await host.invoke();
  return { host, callId: invoke.callId, sessionId: session.id };
}

for (const t of FRAME_TYPES) {
  test(`${t} before register: not_registered`, async () => {
    const host = track(await TestHost.connect(brain.url));
    expectAnswer(t, await send(host, FRAME[t]("ses_x:1")), refused(t), "not_registered");
  });

  test(`${t} for a call never started: unknown_call`, async () => {
    const host = track(await TestHost.register(brain, [tool]));
    expectAnswer(t, await send(host, FRAME[t]("ses_never:1")), refused(t), "unknown_call");
  });

  test(`${t} for another host's call: forbidden`, async () => {
    const { callId } = await openCall(brain);
    const intruder = track(await TestHost.register(brain, [tool]));
    expectAnswer(t, await send(intruder, FRAME[t](callId)), refused(t), "forbidden");
  });

  test(`${t} after the call finished: call_finished`, async () => {
    const { host, callId } = await openCall(brain);
    expectAnswer("finish", await send(host, FRAME.finish(callId)), "committed");
    expectAnswer(t, await send(host, FRAME[t](callId)), refused(t), "call_finished");
  });

  test(`${t} that does not match its def: error invalid_frame with the ref`, async () => {
    const host = track(await TestHost.register(brain, [tool]));
    expectAnswer(t, await send(host, { ...FRAME[t]("ses_x:1"), callId: 42 }), "error", "invalid_frame");
  });

  test(`${t} over maxFrameBytes: error frame_too_large with the ref; the connection stays`, async () => {
    const host = track(await TestHost.register(brain, [tool]));
    expectAnswer(t, await send(host, { ...FRAME[t]("ses_x:1"), pad: "x".repeat(LIMITS.maxFrameBytes) }), "error", "frame_too_large");
    expectAnswer("ping", await ping(host), "pong");
  });
}

for (const t of ["emit", "emit_result", "returned", "finish"] as const) {
  test(`${t} on an open call: committed with a sequence`, async () => {
    const { host, callId } = await openCall(brain);
    const answer = await send(host, FRAME[t](callId));
    expectAnswer(t, answer, "committed");
    assert.ok((answer as { sequence: number }).sequence >= 1);
  });
}

for (const t of ["emit_result", "finish"] as const) {
  test(`${t} with a value that is not an envelope ({"value":1}): rejected invalid_output, and the call ends`, async () => {
    const { host, callId, sessionId } = await openCall(brain);
    expectAnswer(t, await send(host, { ...FRAME[t](callId), outcome: { value: 1 } }), "rejected", "invalid_output", "invalid_output", true);
    const journal = await waitFor(brain, sessionId, (r) => r.type === "tool.finished");
    const finished = journal.find((r) => r.type === "tool.finished")!.data as { status: string; error?: { code: string } };
    assert.equal([finished.status, finished.error?.code], ["error", "invalid_output"]);
    expectAnswer("emit", await send(host, FRAME.emit(callId)), "rejected", "call_finished");
  });
}

test("emit_result with a non-success outcome ends the call; a later emit_result and finish get call_finished", async () => {
  const { host, callId } = await openCall(brain);
  const answer = await send(host, { ...FRAME.emit_result(callId), outcome: { status: "error", error: { code: "nope", message: "m" } } });
  expectAnswer("emit_result", answer, "committed");
  expectAnswer("emit_result", await send(host, FRAME.emit_result(callId)), "rejected", "call_finished");
  expectAnswer("finish", await send(host, FRAME.finish(callId)), "rejected", "call_finished");
});

test("returned twice: rejected conflict without final (the call goes on)", async () => {
  const { host, callId } = await openCall(brain);
  expectAnswer("returned", await send(host, FRAME.returned(callId)), "committed");
  expectAnswer("returned", await send(host, FRAME.returned(callId)), "rejected", "conflict");
});

for (const t of ["emit", "emit_result", "finish"] as const) {
  test(`${t} over the emission budget: rejected budget_exceeded, which itself commits tool.finished error/budget_exceeded`, async () => {
    const { host, callId, sessionId } = await openCall(budgetBrain);
    const big = "x".repeat(200);
    const frame = t === "emit" ? { ...FRAME.emit(callId), data: big } : { ...FRAME[t](callId), outcome: { status: "ok", value: big } };
    expectAnswer(t, await send(host, frame), "rejected", "budget_exceeded", "budget_exceeded", true);
    const journal = await waitFor(budgetBrain, sessionId, (r) => r.type === "tool.finished");
    const finished = journal.filter((r) => r.type === "tool.finished");
    assert.is(finished.length, 1);
    assert.equal((finished[0]!.data as { error?: { code: string } }).error?.code, "budget_exceeded");
    expectAnswer("emit", await send(host, FRAME.emit(callId)), "rejected", "call_finished");
  });
}

test("emit in a session of an API key at its journal-bytes limit: rejected limit_exceeded, and the call goes on", async () => {
  const key = (await api(brain, "POST", "/v1/keys", { name: "journal-bytes" })).body;
  assert.is((await api(brain, "PATCH", `/v1/keys/${key.id}`, { limits: { journalBytes: 1 } })).status, 200);
  const keyed = { url: brain.url, token: key.key as string };
  const host = track(await TestHost.register(keyed, [tool]));
  const created = await api(keyed, "POST", "/v1/sessions", { model: { provider: "scripted", script: toolCall }, tools: [placed(tool, host.hostId)] });
  // The session's own session.created record is over one byte: the message is refused too; the
  // operator lifts the limit for the message, then sets it again.
  await api(brain, "PATCH", `/v1/keys/${key.id}`, { limits: { journalBytes: null } });
  await api(keyed, "POST", `/v1/sessions/${created.body.id}/messages`, { text: "go" });
  const { callId } = await host.invoke();
  await api(brain, "PATCH", `/v1/keys/${key.id}`, { limits: { journalBytes: 1 } });
  expectAnswer("emit", await send(host, FRAME.emit(callId)), "rejected", "limit_exceeded");
  expectAnswer("finish", await send(host, FRAME.finish(callId)), "committed");
});

test("model_request on an open call: model_result with the model's answer", async () => {
  const { host, callId } = await openCall(brain, [toolCall[0]!, { text: "for the tool" }, { text: "done" }]);
  const answer = await send(host, FRAME.model_request(callId));
  expectAnswer("model_request", answer, "model_result");
  assert.is((answer as { result?: { text?: string } }).result?.text, "for the tool");
});

test("model_request over BRAIN_MAX_MODEL_CALLS: model_result budget_exceeded, and the call goes on", async () => {
  const { host, callId } = await openCall(budgetBrain);
  expectAnswer("model_request", await send(host, FRAME.model_request(callId)), "model_result", "budget_exceeded");
  expectAnswer("emit", await send(host, FRAME.emit(callId)), "committed");
});

test("model_request when the provider fails: model_result with the provider's code (script_exhausted), the call goes on", async () => {
  const { host, callId } = await openCall(brain, [toolCall[0]!]);
  expectAnswer("model_request", await send(host, FRAME.model_request(callId)), "model_result", "script_exhausted", "*");
  expectAnswer("emit", await send(host, FRAME.emit(callId)), "committed");
});

test("environment_request: environment_result with the answer, or the error it was refused with (journaled either way)", async () => {
  const host = track(await TestHost.register(brain, [tool]));
  const authority = { list: true, create: {} };
  const session = await createSession(brain, [{ ...placed(tool, host.hostId), placement: { kind: "host", hostId: host.hostId, environments: authority } }], toolCall);
  await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: "go" });
  const { callId } = await host.invoke();
  const env = (request: Record<string, unknown>) => send(host, { type: "environment_request", callId, request });
  const listed = await env({ operation: "list" });
  expectAnswer("environment_request", listed, "environment_result");
  assert.equal((listed as { result?: unknown }).result, { bindings: [] });
  expectAnswer("environment_request", await env({ operation: "create", spec: { name: "d", filesystem: { workspace: "read" } } }), "environment_result", "forbidden");
  expectAnswer("environment_request", await env({ operation: "get", name: "x" }), "environment_result", "not_found");
  expectAnswer("environment_request", await env({ operation: "create", spec: { name: "a" } }), "environment_result");
  expectAnswer("environment_request", await env({ operation: "create", spec: { name: "a" } }), "environment_result", "conflict");
  expectAnswer("environment_request", await env({ operation: "create", spec: { name: "b", tools: ["t"] } }), "environment_result", "invalid_request");
  expectAnswer("environment_request", await env({ operation: "create", spec: { name: "c", runtime: "deno" } }), "environment_result", "unsupported");
  const all = await records(brain, session.id);
  assert.is(all.filter((r) => r.type === "environment.request").length, 7);
  assert.is(all.filter((r) => r.type === "environment.response").length, 7);
});

async function ping(host: TestHost, frame: Record<string, unknown> = { type: "ping", nonce: "n" }): Promise<RuntimeToHostFrame> {
  host.sendRaw(JSON.stringify(frame));
  return host.next((f) => f.type === "pong" || (f.type === "error" && f.ref === undefined));
}

test("ping: pong, also before register; an invalid ping gets error invalid_frame without a ref", async () => {
  const host = track(await TestHost.connect(brain.url));
  const pong = await ping(host);
  expectAnswer("ping", pong, "pong");
  assert.equal(pong, { type: "pong", nonce: "n" });
  const bad = await ping(host, { type: "ping" });
  expectAnswer("ping", bad, "error", "invalid_frame");
  assert.is((bad as { ref?: number }).ref, undefined);
});

function registerFrame(host: TestHost, over: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: "register", protocol: PROTOCOL, token: brain.token, hostId: host.hostId, secret: host.secret, tools: [tool], ...over };
}

test("register: registered, listing every digest the host id ever registered", async () => {
  const first = track(await TestHost.register(brain, [tool]));
  const other = contract("other");
  const again = track(await TestHost.connect(brain.url, { hostId: first.hostId, secret: first.secret }));
  const answer = await send(again, registerFrame(again, { tools: [other] }));
  expectAnswer("register", answer, "registered");
  assert.equal([...(answer as { digests: string[] }).digests].sort(), [tool.digest, other.digest].sort());
  // The two timings a host sizes its own clocks by (liveness, the resend window): this runtime's defaults.
  assert.equal([(answer as { hostTimeoutMs: number }).hostTimeoutMs, (answer as { leaseMs: number }).leaseMs], [LIMITS.defaultHostTimeoutMs, LIMITS.defaultLeaseMs]);
});

test("register with a wrong digest: error digest_mismatch naming the tool and the expected digest; nothing registered; the connection stays", async () => {
  const host = track(await TestHost.connect(brain.url));
  const wrong = { ...tool, digest: "0".repeat(64) };
  const answer = await send(host, registerFrame(host, { tools: [contract("fine"), wrong] }));
  expectAnswer("register", answer, "error", "digest_mismatch");
  assert.equal((answer as { error: { details: unknown } }).error.details, { tool: "t", digest: "0".repeat(64), expected: tool.digest });
  const info = await api(brain, "GET", `/v1/hosts/${host.hostId}`);
  assert.is(info.status, 404, "nothing of the refused frame was registered");
  expectAnswer("ping", await ping(host), "pong");
  expectAnswer("register", await send(host, registerFrame(host)), "registered");
});

test("register a second host id on a registered connection: error invalid_frame", async () => {
  const host = track(await TestHost.register(brain, [tool]));
  expectAnswer("register", await send(host, registerFrame(host, { hostId: `${host.hostId}-other` })), "error", "invalid_frame");
});

test("register over maxFrameBytes: error frame_too_large with the ref", async () => {
  const host = track(await TestHost.connect(brain.url));
  const padded = registerFrame(host, { tools: [{ ...tool, description: "x".repeat(LIMITS.maxFrameBytes) }] });
  expectAnswer("register", await send(host, padded), "error", "frame_too_large");
});

test("register with a wrong token: error unauthorized, then close 4401", async () => {
  const host = track(await TestHost.connect(brain.url));
  expectAnswer("register", await send(host, registerFrame(host, { token: "wrong" })), "error", "unauthorized");
  const closed = await host.closed;
  assert.is(closed.code, 4401);
  observedCloses.add(4401);
});

test("a second connection with the same host id: the first gets error replaced and close 4409", async () => {
  const first = track(await TestHost.register(brain, [tool]));
  const second = track(await TestHost.register(brain, [tool], { hostId: first.hostId, secret: first.secret }));
  const error = await first.next((f) => f.type === "error");
  assert.is((error as { error: { code: string } }).error.code, "replaced");
  assert.is((await first.closed).code, 4409);
  observedCloses.add(4409);
  expectAnswer("ping", await ping(second), "pong");
});

test("a message beyond 4 x maxFrameBytes: close 1009", async () => {
  const host = track(await TestHost.connect(brain.url));
  host.sendRaw("x".repeat(LIMITS.maxFrameBytes * 4 + 1));
  assert.is((await host.closed).code, 1009);
  observedCloses.add(1009);
});

test("a text message that is not UTF-8: close 1007", async () => {
  const host = track(await TestHost.connect(brain.url));
  host.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
  assert.is((await host.closed).code, 1007);
  observedCloses.add(1007);
});

test("a host that answers no WebSocket ping: the runtime drops it (1006 on the host's side)", async () => {
  const quick = await memoryBrain({ hostTimeoutMs: 300 });
  try {
    const ws = new WebSocket(quick.url.replace(/^http/, "ws") + "/v1/hosts/connect", { autoPong: false });
    await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
    const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
    assert.is(await closed, 1006);
    observedCloses.add(1006);
  } finally {
    await quick.close();
  }
});

test("the runtime shutting down: close 1001", async () => {
  const stopping = await memoryBrain();
  const host = await TestHost.register(stopping, [tool]);
  await stopping.close();
  assert.is((await host.closed).code, 1001);
  observedCloses.add(1001);
});

test("no register within registerTimeoutMs: error not_registered without a ref, then close 4408", async () => {
  const error = await lateRegister.next((f) => f.type === "error", LIMITS.registerTimeoutMs + 5000);
  assert.is((error as { error: { code: string }; ref?: number }).error.code, "not_registered");
  assert.is((error as { ref?: number }).ref, undefined);
  assert.is((await lateRegister.closed).code, 4408);
  assert.ok(Date.now() - lateRegisterOpened >= LIMITS.registerTimeoutMs - 100);
  observedCloses.add(4408);
});

// Several nodes on one PostgreSQL (runtime/README.md): the host is connected to node B, the call's
// session is owned by node A, so B relays the host's frames for the call to A (cluster/host-relay.ts).
const NODE_TOKEN = "answers-operator-token-0001";
let pgCluster: PgCluster | undefined;
let twoNodes: Promise<{ db: string; a: NodeProcess; b: NodeProcess }> | undefined;
/** One PostgreSQL server and nodes A and B on one database, started by the first test that needs them. */
function nodes(): Promise<{ db: string; a: NodeProcess; b: NodeProcess }> {
  return (twoNodes ??= (async () => {
    pgCluster = await startPgCluster();
    const db = await freshDatabase(pgCluster.url, "protocol_answers");
    // A lease far longer than these tests: nothing changes hands unless a test makes it.
    const env = { BRAIN_LEASE_MS: "120000", BRAIN_HOST_TIMEOUT_MS: "60000" };
    const a = await startNode(db, NODE_TOKEN, { ...env, BRAIN_NODE_ID: "node-a" });
    const b = await startNode(db, NODE_TOKEN, { ...env, BRAIN_NODE_ID: "node-b" });
    return { db, a, b };
  })());
}
const operator = (n: NodeProcess) => ({ url: n.url, token: NODE_TOKEN });

/** A session created through A (so A owns it) whose call is open on `host`, connected to B. */
async function relayedCall(a: NodeProcess, host: TestHost): Promise<{ callId: string; sessionId: string }> {
  const r = await api(operator(a), "POST", "/v1/sessions", { model: { provider: "scripted", script: toolCall }, tools: [placed(tool, host.hostId)] });
  assert.is(r.status, 201, JSON.stringify(r.body));
  assert.is((await api(operator(a), "POST", `/v1/sessions/${r.body.id}/messages`, { text: "go" })).status, 202);
  const invoke = await host.invoke(10000);
  return { callId: invoke.callId, sessionId: r.body.id as string };
}

const lastSequence = async (db: string, sessionId: string) => Number((await sql(db, "SELECT max(sequence) AS n FROM journal WHERE session_id = $1", [sessionId]))[0].n);
const RELAYED = ["emit", "emit_result", "returned", "finish", "model_request", "environment_request"] as const;

test("several nodes: a frame relayed to an owner that lost the session's lease: rejected conflict with final: true (model_result conflict), nothing journaled", async () => {
  const { db, a, b } = await nodes();
  const host = track(await TestHost.register(operator(b), [tool]));
  const calls = new Map<string, { callId: string; sessionId: string }>();
  for (const t of RELAYED) calls.set(t, await relayedCall(a, host));
  // The same on a host connected to A itself (no relay).
  const direct = track(await TestHost.register(operator(a), [tool]));
  const local = await relayedCall(a, direct);
  const localEnv = await relayedCall(a, direct);
  const sessions = [...calls.values(), local, localEnv].map((c) => c.sessionId);
  const before = new Map<string, number>();
  for (const id of sessions) before.set(id, await lastSequence(db, id));
  // Another node took the sessions over (as after A was paused past its lease: a SIGSTOP would make
  // this depend on whether A's renewal or the frame runs first when it resumes): the lease rows name a
  // live node that is not A, with a raised token. A does not know yet; its next write for each is fenced.
  await sql(db, "INSERT INTO nodes (node_id, url, expires_at, run) VALUES ('node-elsewhere', 'http://127.0.0.1:9', clock_timestamp() + interval '1 hour', 'elsewhere')");
  await sql(db, "UPDATE leases SET owner = 'node-elsewhere', token = token + 1 WHERE session_id = ANY($1)", [sessions]);
  const conflict = async (h: TestHost, t: (typeof RELAYED)[number], callId: string) => {
    const answer = await send(h, FRAME[t](callId));
    // final: the call is over, which tells this conflict from the one of a second `returned`.
    expectAnswer(t, answer, refused(t), "conflict", "conflict", true);
    assert.is((answer as { error: { retryable?: boolean } }).error.retryable, undefined, `${t}: not retryable`);
  };
  for (const t of RELAYED) {
    const { callId, sessionId } = calls.get(t)!;
    await conflict(host, t, callId);
    assert.is(await lastSequence(db, sessionId), before.get(sessionId), `${t}: nothing journaled`);
    // A let go of the session: later frames for the call are refused as for a finished call.
    expectAnswer("emit", await send(host, FRAME.emit(callId)), "rejected", "call_finished");
  }
  await conflict(direct, "emit", local.callId);
  // Environment control too: its conflict is final, unlike a binding name conflict (which has no final).
  const envAnswer = await send(direct, FRAME.environment_request(localEnv.callId));
  expectAnswer("environment_request", envAnswer, "environment_result", "conflict", "conflict", true);
  expectAnswer("emit", await send(direct, FRAME.emit(local.callId)), "rejected", "call_finished");
  assert.is(await lastSequence(db, local.sessionId), before.get(local.sessionId), "direct: nothing journaled");
});

test("several nodes: a frame relayed to an owner that cannot be reached: rejected unavailable, retryable (model_result and environment_result unavailable), then call_finished once the session was taken over; environment_request is relayed", async () => {
  const { db, a, b } = await nodes();
  const host = track(await TestHost.register(operator(b), [tool]));
  const { callId, sessionId } = await relayedCall(a, host);
  // Relayed while A answers: committed with A's sequence; environment control is relayed too (the
  // tool has no grant: A journals and answers `forbidden`).
  const ok = await send(host, FRAME.emit(callId));
  expectAnswer("emit", ok, "committed");
  assert.is((ok as { sequence: number }).sequence, await lastSequence(db, sessionId));
  expectAnswer("environment_request", await send(host, FRAME.environment_request(callId)), "environment_result", "forbidden");
  const before = await lastSequence(db, sessionId);
  await kill9(a.child);
  for (const t of RELAYED) {
    const answer = await send(host, FRAME[t](callId));
    expectAnswer(t, answer, refused(t), "unavailable");
    assert.is((answer as { error: { retryable?: boolean } }).error.retryable, true, `${t}: ${JSON.stringify(answer)}`);
  }
  // Sent again (the host retries): the same answer while the owner is gone.
  expectAnswer("emit", await send(host, FRAME.emit(callId)), "rejected", "unavailable");
  assert.is(await lastSequence(db, sessionId), before, "nothing journaled");
  // Another node takes the session over (which ends the call `unknown` there): the host's node finds
  // the lease moved and answers as for a finished call, no longer `unavailable`.
  await sql(db, "UPDATE leases SET owner = 'node-b', token = token + 1 WHERE session_id = $1", [sessionId]);
  for (const t of RELAYED) expectAnswer(t, await send(host, FRAME[t](callId)), refused(t), "call_finished");
});

test("several nodes: an HTTP request whose record the owner can no longer write (another node took the lease): 503 unavailable, retryable, nothing journaled, never a 409", async () => {
  // B: the test above killed A.
  const { db, b } = await nodes();
  const created = await api(operator(b), "POST", "/v1/sessions", { model: { provider: "scripted", script: [{ text: "one" }, { text: "two" }] }, tools: [] });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  assert.is((await api(operator(b), "POST", `/v1/sessions/${id}/messages`, { text: "first", wait: true })).status, 200);
  const before = await lastSequence(db, id);
  // As in the frame test above: the lease row names another live node, with a raised token; B, which
  // still runs the session, finds out only when its next write is fenced.
  await sql(db, "INSERT INTO nodes (node_id, url, expires_at, run) VALUES ('node-elsewhere', 'http://127.0.0.1:9', clock_timestamp() + interval '1 hour', 'elsewhere') ON CONFLICT (node_id) DO NOTHING");
  await sql(db, "UPDATE leases SET owner = 'node-elsewhere', token = token + 1 WHERE session_id = $1", [id]);
  const sent = await api(operator(b), "POST", `/v1/sessions/${id}/messages`, { text: "second", wait: true });
  assert.is(sent.status, 503, JSON.stringify(sent.body));
  assert.is(sent.body.error.code, "unavailable");
  assert.is(sent.body.error.retryable, true);
  assert.is(await lastSequence(db, id), before, "nothing journaled");
});

test("every answer and close code the contract documents was observed here, and nothing undocumented", () => {
  assert.equal([...observed].filter((k) => !documented.has(k)).sort(), [], "observed but not documented");
  assert.equal([...documented].filter((k) => !observed.has(k)).sort(), [], "documented but not observed");
  assert.equal([...observedCloses].sort(), [...documentedCloses].sort());
});

test.run();
