import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LIMITS, PROTOCOL, validate } from "@aexhq/brain-protocol";
import { startBrain } from "../src/index.ts";
import { memoryBrain, api, createSession, records, waitFor, assertJournal, finishedOf } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost, invalidFrames } from "./helpers/host.ts";

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

async function track<T extends TestHost>(h: T): Promise<T> {
  hosts.push(h);
  return h;
}

async function alive(host: TestHost): Promise<void> {
  host.send({ type: "ping", nonce: "still-there" });
  const pong = await host.next((f) => f.type === "pong");
  assert.equal(pong, { type: "pong", nonce: "still-there" });
}

test("register answers registered with the host's digests", async () => {
  const host = await track(await TestHost.connect(brain.url));
  const reply = await host.registerTools(brain.token, [echo]);
  assert.ok(validate.RegisteredFrame.Check(reply));
  assert.equal(reply, { type: "registered", ref: 1, hostId: host.hostId, digests: [echo.digest], hostTimeoutMs: LIMITS.defaultHostTimeoutMs, leaseMs: LIMITS.defaultLeaseMs });
  // A second register on the same connection adds tools (union by digest).
  const more = contract("more");
  const again = await host.registerTools(brain.token, [more, echo]);
  assert.equal((again as { digests: string[] }).digests.sort(), [echo.digest, more.digest].sort());
});

test("a wrong token gets an unauthorized error frame, then the connection closes", async () => {
  const host = await track(await TestHost.connect(brain.url));
  const reply = await host.registerTools("wrong-token", [echo]);
  assert.is(reply.type, "error");
  assert.is((reply as { error: { code: string } }).error.code, "unauthorized");
  const closed = await host.closed;
  assert.is(closed.code, 4401);
  const h = await api(brain, "GET", "/healthz", undefined, { token: null });
  assert.is(h.status, 200, "server still up");
});

test("a wrong secret for a known host id is unauthorized", async () => {
  const first = await track(await TestHost.register(brain, [echo]));
  await first.close();
  const impostor = await track(await TestHost.connect(brain.url, { hostId: first.hostId, secret: "another-secret-entirely" }));
  const reply = await impostor.registerTools(brain.token, [echo]);
  assert.is((reply as { error: { code: string } }).error.code, "unauthorized");
  assert.is((await impostor.closed).code, 4401);
});

test("a host id of Brain's managed hosts (managed-…) that serves no binding is unauthorized, and nothing is registered", async () => {
  const squatter = await track(await TestHost.connect(brain.url, { hostId: "managed-0011223344556677" }));
  const reply = await squatter.registerTools(brain.token, [echo]);
  assert.is((reply as { error: { code: string } }).error.code, "unauthorized");
  assert.match((reply as { error: { message: string } }).error.message, /Brain-managed host/);
  assert.is((await squatter.closed).code, 4401);
  assert.is((await api(brain, "GET", "/v1/hosts/managed-0011223344556677")).status, 404);
});

test("a second connection with the same host id replaces the first", async () => {
  const first = await track(await TestHost.register(brain, [echo]));
  const second = await track(await TestHost.register(brain, [echo], { hostId: first.hostId, secret: first.secret }));
  const err = await first.next((f) => f.type === "error");
  assert.is((err as { error: { code: string } }).error.code, "replaced");
  assert.is((await first.closed).code, 4409);
  await alive(second);
});

test("frames before register are refused not_registered; ping works", async () => {
  const host = await track(await TestHost.connect(brain.url));
  await alive(host);
  host.send({ type: "emit", ref: 7, callId: "ses_x:1", kind: "k", data: 1 });
  const r = await host.next((f) => f.type === "rejected");
  assert.is((r as { error: { code: string }; ref: number }).error.code, "not_registered");
  assert.is((r as { ref: number }).ref, 7);
});

test("malformed JSON, unknown frame types and invalid frames get error frames and the connection stays", async () => {
  const host = await track(await TestHost.register(brain, [echo]));
  host.sendRaw("{not json");
  const e1 = await host.next((f) => f.type === "error");
  assert.is((e1 as { error: { code: string } }).error.code, "malformed_json");
  host.sendRaw(JSON.stringify({ type: "teleport", ref: 3 }));
  const e2 = await host.next((f) => f.type === "error");
  assert.is((e2 as { error: { code: string } }).error.code, "unknown_frame");
  host.sendRaw(JSON.stringify({ type: "emit", ref: 4, callId: 12 }));
  const e3 = await host.next((f) => f.type === "error");
  assert.is((e3 as { error: { code: string } }).error.code, "invalid_frame");
  assert.is((e3 as { ref?: number }).ref, 4);
  assert.ok(validate.ErrorFrame.Check(e3));
  await alive(host);
});

test("an oversized frame gets frame_too_large and the connection stays", async () => {
  const host = await track(await TestHost.register(brain, [echo]));
  host.sendRaw(JSON.stringify({ type: "emit", ref: 9, callId: "x", kind: "k", data: "y".repeat(LIMITS.maxFrameBytes) }));
  const e = await host.next((f) => f.type === "error");
  assert.is((e as { error: { code: string } }).error.code, "frame_too_large");
  await alive(host);
});

test("a frame beyond 4x the limit closes the connection with 1009; the server stays up", async () => {
  const host = await track(await TestHost.register(brain, [echo]));
  host.sendRaw("x".repeat(LIMITS.maxFrameBytes * 4 + 16));
  const closed = await host.closed;
  assert.is(closed.code, 1009);
  const other = await track(await TestHost.register(brain, [echo]));
  await alive(other);
});

test("a host cannot answer another host's call (forbidden) or an unknown call (unknown_call)", async () => {
  const owner = await track(await TestHost.register(brain, [echo]));
  const intruder = await track(await TestHost.register(brain, [echo]));
  const session = await createSession(brain, [placed(echo, owner.hostId)], [{ toolCalls: [{ name: "echo", input: {} }] }, { text: "done" }]);
  await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: "go" });
  const invoke = await owner.invoke();
  assert.is(intruder.frames.filter((f) => f.type === "invoke").length, 0, "only the placed host is invoked");
  const stolen = await intruder.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value: "stolen" } });
  assert.is((stolen as { error: { code: string } }).error.code, "forbidden");
  const bogus = await intruder.request({ type: "emit", callId: `${session.id}:999`, kind: "k", data: 1 });
  assert.is((bogus as { error: { code: string } }).error.code, "unknown_call");
  const before = await records(brain, session.id);
  assert.is(finishedOf(before, invoke.callId).length, 0, "the intruder changed nothing");
  await owner.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value: "real" } });
  const all = await waitFor(brain, session.id, (r) => r.type === "turn.completed");
  assertJournal(all);
  const result = all.find((r) => r.type === "tool.result")!;
  assert.equal((result.data as { outcome: unknown }).outcome, { status: "ok", value: "real" });
});

test("a host that reconnects without a placed contract (changed schemas) gets no invoke; the call ends reattach_mismatch", async () => {
  const v1 = contract("versioned", { type: "object", properties: { id: { type: "string" } } });
  const first = await track(await TestHost.register(brain, [v1]));
  const session = await createSession(brain, [placed(v1, first.hostId)], [{ toolCalls: [{ name: "versioned", input: { id: "a" } }] }, { text: "done" }]);
  await first.close();
  const v2 = contract("versioned", { type: "object", properties: { id: { type: "string" }, note: { type: "string" } }, required: ["note"] });
  const second = await track(await TestHost.register(brain, [v2], { hostId: first.hostId, secret: first.secret }));
  await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: "go" });
  const all = await waitFor(brain, session.id, (r) => r.type === "turn.completed" || r.type === "turn.failed");
  assertJournal(all);
  const finished = all.find((r) => r.type === "tool.finished")!.data as { status: string; error?: { code: string; message: string } };
  assert.is(finished.status, "error");
  assert.is(finished.error?.code, "reattach_mismatch");
  assert.match(finished.error!.message, "did not register tool versioned");
  await alive(second);
  assert.is(second.frames.filter((f) => f.type === "invoke").length, 0, "the changed host was never invoked with the old contract");
});

test("host registrations persist across a restart; only the same secret re-registers", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-hosts-"));
  try {
    let b = await startBrain({ dataDir: dir, port: 0, token: "tok-tok-tok" });
    const host = await TestHost.register(b, [echo], { hostId: "persisted-host", secret: "persisted-secret-1" });
    await host.close();
    await b.close();
    b = await startBrain({ dataDir: dir, port: 0, token: "tok-tok-tok" });
    // The registry survived: a session can be refused because the host is not connected (not: unknown host).
    const refused = await api(b, "POST", "/v1/sessions", { model: { provider: "scripted", script: [] }, tools: [placed(echo, "persisted-host")] });
    assert.is(refused.status, 409);
    assert.is(refused.body.error.code, "host_unavailable");
    const wrong = await TestHost.connect(b.url, { hostId: "persisted-host", secret: "not-the-same-secret" });
    const r = await wrong.registerTools(b.token, []);
    assert.is((r as { error: { code: string } }).error.code, "unauthorized");
    await wrong.closed;
    const right = await TestHost.connect(b.url, { hostId: "persisted-host", secret: "persisted-secret-1" });
    const ok = await right.registerTools(b.token, []);
    assert.equal((ok as { digests: string[] }).digests, [echo.digest], "contracts kept from the first registration");
    await right.close();
    await b.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the protocol constant is brain.host/0.2", () => {
  assert.is(PROTOCOL, "brain.host/0.2");
});

test("every frame the runtime sent matched its contract def", () => {
  assert.equal(invalidFrames, []);
});

test.run();
