// Environment control (ctx.environments) end to end on a real runtime: a raw host (real WebSocket)
// asks for each operation from inside an open call; the session has real component bindings (WAT
// fixtures uploaded over HTTP) and a descriptor binding (http_json against a local server), which
// nested calls run. Each operation allowed and refused, the journal records (request before its
// effect, origin, the nested call's records and deadline), and authority never widened.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EnvironmentAuthority, EnvironmentRequest, JournalRecord, PlacedTool, RuntimeToHostFrame, ScriptStep, ToolContract } from "@aexhq/brain-protocol";
import { api, assertJournal, createSession, memoryBrain, ofType, records, waitFor } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contract } from "./helpers/contract.ts";
import { TestHost, invalidFrames } from "./helpers/host.ts";
import { upload } from "./component-helpers.mts";
import { contractDigest, startBrain } from "../src/index.ts";
// @ts-ignore: a plain .mjs build script without declarations.
import { buildFixtures } from "../../scripts/build-components.mjs";

const fixtures = (await buildFixtures({ js: false })) as Record<string, string>;

/** A component tool: `echo_c` (background.wat: its result is {"later": true}), `spin` (never returns). */
function componentContract(name: string): ToolContract {
  const c = { name, description: `the ${name} component`, inputSchema: { type: "object" } };
  return { ...c, digest: contractDigest(c) };
}
const echoC = componentContract("echo_c");
const spinC = componentContract("spin");
const fetchC = (() => {
  const c = { name: "fetch_thing", description: "the fetch_thing descriptor", inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } };
  return { ...c, digest: contractDigest(c) };
})();
const caller = contract("caller");

let brain: Brain;
let noRoot: Brain;
let budget: Brain;
let apiServer: Server;
let apiUrl: string;
let workspaceRoot: string;
const digests: Record<string, string> = {};
const hosts: TestHost[] = [];

test.before(async () => {
  apiServer = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ url: req.url, filler: "x".repeat(200) })));
  });
  await new Promise<void>((r) => apiServer.listen(0, "127.0.0.1", r));
  apiUrl = `http://127.0.0.1:${(apiServer.address() as AddressInfo).port}`;
  workspaceRoot = mkdtempSync(join(tmpdir(), "brain-envctl-"));
  const descriptorEnvironments = { api: { type: "http_json" as const, baseUrl: apiUrl } };
  brain = await memoryBrain({ workspaceRoot, descriptorEnvironments });
  noRoot = await memoryBrain({ descriptorEnvironments });
  budget = await memoryBrain({ workspaceRoot, descriptorEnvironments, maxEmittedBytes: 300 });
  for (const b of [brain, noRoot, budget]) {
    for (const f of ["background", "spin"]) {
      const up = await upload(b, fixtures[f]!);
      assert.ok(up.status === 200 || up.status === 201, JSON.stringify(up.body));
      digests[f] = up.digest;
    }
  }
});

test.after(async () => {
  for (const h of hosts) await h.close();
  for (const b of [brain, noRoot, budget]) await b.close();
  await new Promise((r) => apiServer.close(r));
  rmSync(workspaceRoot, { recursive: true, force: true });
});

function component(c: ToolContract, digest: string, env: string, workspace?: "read" | "write"): PlacedTool {
  return { contract: c, options: {}, placement: { kind: "component", env, digest, ...(workspace ? { filesystem: { workspace } } : {}) } };
}

/** The session's tools: the host tool `caller` (with `authority`), components in "tools" (write) and "other", a descriptor in "api". */
function tools(hostId: string, authority?: EnvironmentAuthority, grants = true): PlacedTool[] {
  return [
    { contract: caller, options: {}, placement: { kind: "host", hostId, ...(authority ? { environments: authority } : {}) } },
    component(echoC, digests.background!, "tools", grants ? "write" : undefined),
    component(spinC, digests.spin!, "tools"),
    component(componentContract("echo_other"), digests.background!, "other"),
    { contract: fetchC, options: {}, placement: { kind: "descriptor", env: "api", descriptor: { type: "http_json", method: "GET", path: "/things/{id}" } } },
  ];
}

const callerStep: ScriptStep[] = [{ toolCalls: [{ name: "caller", input: {} }] }, { text: "done" }, { text: "spare" }];

/** A session whose model calls `caller` on a fresh raw host; resolves once the host holds the invoke. */
async function open(authority?: EnvironmentAuthority, opts: { on?: Brain; deadlineMs?: number; only?: PlacedTool[] } = {}) {
  const b = opts.on ?? brain;
  const host = await TestHost.register(b, [caller]);
  hosts.push(host);
  const placed = opts.only ? [tools(host.hostId, authority)[0]!, ...opts.only] : tools(host.hostId, authority, b !== noRoot);
  const session = await createSession(b, placed, callerStep, opts.deadlineMs ? { deadlineMs: opts.deadlineMs } : {});
  await api(b, "POST", `/v1/sessions/${session.id}/messages`, { text: "go" });
  const invoke = await host.invoke();
  return { b, host, sessionId: session.id, callId: invoke.callId, deadlineAt: invoke.deadlineAt };
}
type Opened = Awaited<ReturnType<typeof open>>;

type Result = Extract<RuntimeToHostFrame, { type: "environment_result" }>;
async function ask(o: Opened, request: EnvironmentRequest, timeoutMs = 5000): Promise<Result> {
  const ref = o.host.nextRef();
  o.host.send({ type: "environment_request", ref, callId: o.callId, request });
  return (await o.host.next((f) => f.type === "environment_result" && f.ref === ref, timeoutMs)) as Result;
}

function refusal(r: Result): { code: string; missing?: string; message: string } {
  assert.ok(r.error, `expected an error, got ${JSON.stringify(r)}`);
  return { code: r.error.code, message: r.error.message, missing: (r.error.details as { missing?: string } | undefined)?.missing };
}

/** The environment.request / environment.response pairs of the session, in order. */
async function operations(o: Opened) {
  const all = await records(o.b, o.sessionId);
  assertJournal(all);
  const requests = ofType(all, "environment.request");
  const responses = ofType(all, "environment.response");
  return { all, pairs: requests.map((q) => ({ q, r: responses.find((r) => r.data.request === q.sequence) })) };
}

const EVERY: EnvironmentRequest[] = [
  { operation: "list" },
  { operation: "get", name: "tools" },
  { operation: "create", spec: { name: "mine" } },
  { operation: "update", name: "tools", spec: {} },
  { operation: "setup", name: "tools" },
  { operation: "delete", name: "tools" },
  { operation: "call", name: "tools", tool: "echo_c", input: { a: 1 } },
];
const MISSING = ["environments.list", "environments.list", "environments.create", "environments.create", 'environments.setup: ["tools"]', "environments.create", 'environments.call: ["tools"]'];

test("no authority by default: every operation is refused forbidden naming the missing grant, journaled request then response, with origin", async () => {
  const o = await open();
  for (const [i, request] of EVERY.entries()) {
    const r = refusal(await ask(o, request));
    assert.is(r.code, "forbidden", r.message);
    assert.is(r.missing, MISSING[i], r.message);
    assert.ok(r.message.includes(MISSING[i]!), r.message);
  }
  const { all, pairs } = await operations(o);
  assert.is(pairs.length, EVERY.length);
  for (const [i, { q, r }] of pairs.entries()) {
    assert.equal(q.data, { origin: o.callId, request: EVERY[i] });
    assert.ok(r && r.sequence > q.sequence, "the response follows its request");
    assert.is(r!.data.origin, o.callId);
    assert.is(r!.data.error?.code, "forbidden");
  }
  assert.is(ofType(all, "tool.call_started").length, 1, "the refused call started nothing");
  await o.host.request({ type: "finish", callId: o.callId });
});

test("list and get with environments.list: the session's Brain-side bindings with their grants and tools; not_found for another name", async () => {
  const o = await open({ list: true });
  const listed = await ask(o, { operation: "list" });
  assert.equal(listed.result?.bindings, [
    { name: "tools", kind: "brain", source: "session", filesystem: { workspace: "write" }, tools: [{ name: "echo_c", implementation: "component" }, { name: "spin", implementation: "component" }], state: "ready" },
    { name: "other", kind: "brain", source: "session", tools: [{ name: "echo_other", implementation: "component" }], state: "ready" },
    { name: "api", kind: "brain", source: "session", tools: [{ name: "fetch_thing", implementation: "descriptor" }], state: "ready" },
  ]);
  assert.equal((await ask(o, { operation: "get", name: "api" })).result?.binding?.tools, [{ name: "fetch_thing", implementation: "descriptor" }]);
  assert.is(refusal(await ask(o, { operation: "get", name: "nope" })).code, "not_found");
  // list grants seeing, nothing else.
  assert.is(refusal(await ask(o, { operation: "create", spec: { name: "x" } })).missing, "environments.create");
  const { pairs } = await operations(o);
  assert.equal(pairs[0]!.r!.data.result, { bindings: listed.result!.bindings }, "the response journals the answer");
  await o.host.request({ type: "finish", callId: o.callId });
});

test("create, update, setup and delete within environments.create; a created binding never holds more than the caller's grant", async () => {
  const o = await open({ list: true, create: { filesystem: { workspace: "read" } } });
  const made = await ask(o, { operation: "create", spec: { name: "ro", filesystem: { workspace: "read" }, tools: ["echo_c"] } });
  assert.equal(made.result?.binding, { name: "ro", kind: "brain", source: "created", filesystem: { workspace: "read" }, tools: [{ name: "echo_c", implementation: "component" }], state: "ready" });
  // More than the caller holds (write), however it is asked for.
  const wider = refusal(await ask(o, { operation: "create", spec: { name: "rw", filesystem: { workspace: "write" } } }));
  assert.equal([wider.code, wider.missing], ["forbidden", 'environments.create.filesystem.workspace: "write"']);
  assert.ok(wider.message.includes("cannot create more authority"), wider.message);
  const widened = refusal(await ask(o, { operation: "update", name: "ro", spec: { filesystem: { workspace: "write" }, tools: ["echo_c"] } }));
  assert.equal([widened.code, widened.missing], ["forbidden", 'environments.create.filesystem.workspace: "write"']);
  // The session's own bindings are fixed; names are unique; tools are the session's component tools.
  assert.is(refusal(await ask(o, { operation: "update", name: "tools", spec: {} })).code, "conflict");
  assert.is(refusal(await ask(o, { operation: "delete", name: "tools" })).code, "conflict");
  assert.is(refusal(await ask(o, { operation: "create", spec: { name: "tools" } })).code, "conflict");
  assert.is(refusal(await ask(o, { operation: "create", spec: { name: "ro" } })).code, "conflict");
  assert.is(refusal(await ask(o, { operation: "create", spec: { name: "d", tools: ["fetch_thing"] } })).code, "invalid_request");
  assert.is(refusal(await ask(o, { operation: "create", spec: { name: "d", tools: ["caller"] } })).code, "invalid_request");
  const node = refusal(await ask(o, { operation: "create", spec: { name: "n", runtime: "node" } }));
  assert.equal([node.code, /Brain-managed node hosts/.test(node.message)], ["unsupported", true], node.message);
  // setup: nothing to prepare for a component binding; journaled and answered as it is.
  assert.is((await ask(o, { operation: "setup", name: "ro" })).result?.binding?.state, "ready");
  // A session binding is set up or called only when named (it holds write here).
  assert.is(refusal(await ask(o, { operation: "setup", name: "tools" })).missing, 'environments.setup: ["tools"]');
  // update: narrower is fine; it replaces the binding's grants and tools.
  const narrowed = await ask(o, { operation: "update", name: "ro", spec: { tools: ["echo_c", "spin"] } });
  assert.equal(narrowed.result?.binding, { name: "ro", kind: "brain", source: "created", tools: [{ name: "echo_c", implementation: "component" }, { name: "spin", implementation: "component" }], state: "ready" });
  assert.equal((await ask(o, { operation: "list" })).result?.bindings?.map((b) => b.name), ["tools", "other", "api", "ro"]);
  assert.equal((await ask(o, { operation: "delete", name: "ro" })).result, {});
  assert.is(refusal(await ask(o, { operation: "get", name: "ro" })).code, "not_found");
  assert.is(refusal(await ask(o, { operation: "delete", name: "ro" })).code, "not_found");
  await o.host.request({ type: "finish", callId: o.callId });
});

test("a binding a tool with a wider grant created is out of reach of a narrower one: update, delete, setup, call forbidden; list sees it", async () => {
  // One session, one step calling two host tools: `caller` may create write bindings, `narrow` read ones.
  const narrow = contract("narrow");
  const host = await TestHost.register(brain, [caller, narrow]);
  hosts.push(host);
  const placed = tools(host.hostId, { create: { filesystem: { workspace: "write" } } });
  placed.push({ contract: narrow, options: {}, placement: { kind: "host", hostId: host.hostId, environments: { list: true, create: { filesystem: { workspace: "read" } } } } });
  const session = await createSession(brain, placed, [{ toolCalls: [{ name: "caller", input: {} }, { name: "narrow", input: {} }] }, { text: "done" }]);
  await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: "go" });
  const invokes = [await host.invoke(), await host.invoke()];
  const as = (tool: string): Opened => ({ b: brain, host, sessionId: session.id, callId: invokes.find((i) => i.tool === tool)!.callId, deadlineAt: null });
  const wide = as("caller");
  const low = as("narrow");
  assert.ok((await ask(wide, { operation: "create", spec: { name: "w", filesystem: { workspace: "write" }, tools: ["echo_c"] } })).result?.binding);
  assert.ok((await ask(low, { operation: "create", spec: { name: "r", filesystem: { workspace: "read" }, tools: ["echo_c"] } })).result?.binding);
  assert.equal((await ask(low, { operation: "list" })).result?.bindings?.filter((b) => b.source === "created").map((b) => [b.name, b.filesystem?.workspace]), [["w", "write"], ["r", "read"]]);
  for (const request of [
    { operation: "update", name: "w", spec: { tools: [] } },
    { operation: "delete", name: "w" },
    { operation: "setup", name: "w" },
    { operation: "call", name: "w", tool: "echo_c", input: {} },
  ] as EnvironmentRequest[]) {
    const r = refusal(await ask(low, request));
    assert.is(r.code, "forbidden", `${request.operation}: ${r.message}`);
    assert.ok(/holds filesystem.workspace "write"/.test(r.message), r.message);
  }
  // The wider tool reaches both; the narrower its own.
  assert.is((await ask(wide, { operation: "call", name: "r", tool: "echo_c", input: { x: 1 } })).result?.outcome?.status, "ok");
  assert.is((await ask(low, { operation: "call", name: "r", tool: "echo_c", input: { x: 2 } })).result?.outcome?.status, "ok");
  // Another session has bindings of its own.
  const other = await open({ list: true });
  assert.equal((await ask(other, { operation: "list" })).result?.bindings?.map((b) => b.name), ["tools", "other", "api"]);
  for (const o of [wide, low, other]) await o.host.request({ type: "finish", callId: o.callId });
});

test("without an allow-list (no BRAIN_WORKSPACE_ROOT) a created workspace grant is forbidden naming it; without a grant it is fine", async () => {
  const o = await open({ create: { filesystem: { workspace: "write" } } }, { on: noRoot });
  const r = refusal(await ask(o, { operation: "create", spec: { name: "ro", filesystem: { workspace: "read" }, tools: ["echo_c"] } }));
  assert.equal([r.code, r.missing], ["forbidden", "BRAIN_WORKSPACE_ROOT"], r.message);
  assert.ok((await ask(o, { operation: "create", spec: { name: "plain", tools: ["echo_c"] } })).result?.binding);
  await o.host.request({ type: "finish", callId: o.callId });
});

test("call: a nested call journaled with origin, without a modelCallId, its deadline the caller's; answered with its Outcome; not part of the conversation", async () => {
  const o = await open({ call: ["tools", "api"] }, { deadlineMs: 30_000 });
  assert.ok(o.deadlineAt !== null);
  // A later requested deadline is cut to the caller's.
  const r = await ask(o, { operation: "call", name: "tools", tool: "echo_c", input: { hello: "world" }, deadlineAt: o.deadlineAt! + 60_000 });
  assert.equal(r.result?.outcome, { status: "ok", value: { later: true } });
  const nestedId = r.result!.callId!;
  // An earlier one is kept.
  const soon = Date.now() + 20_000;
  const viaApi = await ask(o, { operation: "call", name: "api", tool: "fetch_thing", input: { id: "7" }, deadlineAt: soon });
  assert.equal((viaApi.result?.outcome as { value: { url: string } }).value.url, "/things/7");
  await o.host.request({ type: "finish", outcome: { status: "ok", value: "caller done" }, callId: o.callId });
  const all = await waitFor(o.b, o.sessionId, (x) => x.type === "turn.completed");
  assertJournal(all);
  const started = ofType(all, "tool.call_started");
  assert.is(started.length, 3);
  const [callerStart, nested, nestedApi] = started;
  assert.is(nested!.data.callId, nestedId);
  assert.is(nested!.data.origin, o.callId);
  assert.is(nested!.data.modelCallId, undefined);
  assert.is(nested!.data.activation, callerStart!.data.activation, "charged to the caller's activation");
  assert.is(nested!.data.deadlineAt, o.deadlineAt, "bounded by the caller's deadline");
  assert.equal(nested!.data.placement, { kind: "component", env: "tools", digest: digests.background, filesystem: { workspace: "write" } });
  assert.is(nestedApi!.data.deadlineAt, soon);
  // request → nested call's intent, result, finish → response, in that order.
  const seq = (pred: (x: JournalRecord) => boolean) => all.find(pred)!.sequence;
  const req = all.find((x) => x.type === "environment.request" && x.data.request.operation === "call")!;
  const res = all.find((x) => x.type === "environment.response" && x.data.request === req.sequence)!;
  assert.ok(req.sequence < nested!.sequence);
  assert.ok(nested!.sequence < seq((x) => x.type === "tool.finished" && x.data.callId === nestedId));
  assert.ok(seq((x) => x.type === "tool.finished" && x.data.callId === nestedId) < res.sequence);
  assert.equal(res.data, { origin: o.callId, request: req.sequence, result: { callId: nestedId } }, "the journal names the nested call, not a copy of its outcome");
  // The model saw only the caller's result: nested calls are no part of the conversation.
  const expanded = await records(o.b, o.sessionId, 0, { expand: true });
  const lastRequest = ofType(expanded, "model.request").at(-1)!;
  const toolMessages = lastRequest.data.request!.messages.filter((m) => m.role === "tool");
  assert.equal(toolMessages.map((m) => m.content), [JSON.stringify({ status: "ok", value: "caller done" })]);
  assert.is(ofType(all, "turn.started").length, 1, "a nested result does not wake the Agentloop");
});

test("call: created bindings run their tools with the binding's grants; unknown tools not_found; session bindings need their name", async () => {
  const o = await open({ create: { filesystem: { workspace: "read" } } });
  await ask(o, { operation: "create", spec: { name: "ro", filesystem: { workspace: "read" }, tools: ["echo_c"] } });
  const r = await ask(o, { operation: "call", name: "ro", tool: "echo_c", input: { n: 1 } });
  assert.equal(r.result?.outcome, { status: "ok", value: { later: true } });
  assert.is(refusal(await ask(o, { operation: "call", name: "ro", tool: "spin", input: {} })).code, "not_found");
  assert.is(refusal(await ask(o, { operation: "call", name: "nowhere", tool: "x", input: {} })).code, "not_found");
  assert.is(refusal(await ask(o, { operation: "call", name: "tools", tool: "echo_c", input: {} })).missing, 'environments.call: ["tools"]');
  const all = await records(o.b, o.sessionId);
  const nested = ofType(all, "tool.call_started").find((x) => x.data.callId === r.result!.callId)!;
  assert.equal(nested.data.placement, { kind: "component", env: "ro", digest: digests.background, filesystem: { workspace: "read" } }, "the write-placed tool runs with the binding's read grant");
  await o.host.request({ type: "finish", callId: o.callId });
});

test("call: the nested call ends by the earlier deadline (timeout), at the latest with its caller; the caller's end cancels a nested call still running", async () => {
  const early = await open({ call: ["tools"] }, { deadlineMs: 30_000 });
  const timedOut = await ask(early, { operation: "call", name: "tools", tool: "spin", input: {}, deadlineAt: Date.now() + 300 });
  assert.equal(timedOut.result?.outcome, { status: "timeout", message: "the call's deadline passed" });
  await early.host.request({ type: "finish", callId: early.callId });

  const short = await open({ call: ["tools"] }, { deadlineMs: 600 });
  const cut = await ask(short, { operation: "call", name: "tools", tool: "spin", input: {} });
  // The nested call's deadline is the caller's: both end at that moment. Whichever timer fires first
  // decides the answer: the nested call's timeout (its result), or the caller's end (call_finished).
  assert.ok(cut.error?.code === "call_finished" || (cut.result?.outcome as { status?: string } | undefined)?.status === "timeout", JSON.stringify(cut));
  const all = await waitFor(short.b, short.sessionId, (x) => x.type === "tool.finished" && x.data.callId !== short.callId);
  const nested = ofType(all, "tool.call_started").find((x) => x.data.origin === short.callId)!;
  assert.is(nested.data.deadlineAt, short.deadlineAt);
  const fin = ofType(all, "tool.finished").find((x) => x.data.callId === nested.data.callId)!;
  assert.ok(["timeout", "cancelled"].includes(fin.data.status), fin.data.status);
  assert.ok(fin.at >= short.deadlineAt! - 5, "not before the caller's deadline");

  const o = await open({ call: ["tools"] });
  const ref = o.host.nextRef();
  o.host.send({ type: "environment_request", ref, callId: o.callId, request: { operation: "call", name: "tools", tool: "spin", input: {} } });
  const running = await waitFor(o.b, o.sessionId, (x) => x.type === "tool.call_started" && x.data.origin === o.callId);
  const nestedId = ofType(running, "tool.call_started").find((x) => x.data.origin === o.callId)!.data.callId;
  await o.host.request({ type: "finish", callId: o.callId });
  const answer = (await o.host.next((f) => f.type === "environment_result" && f.ref === ref)) as Result;
  assert.is(answer.error?.code, "call_finished");
  const done = await waitFor(o.b, o.sessionId, (x) => x.type === "tool.finished" && x.data.callId === nestedId);
  const cancelled = ofType(done, "tool.finished").find((x) => x.data.callId === nestedId)!;
  assert.is(cancelled.data.status, "cancelled");
  assert.match(cancelled.data.message ?? "", new RegExp(`calling call ${o.callId} ended`));
});

test("call: the nested call spends the caller's activation budget (BRAIN_MAX_EMITTED_BYTES)", async () => {
  const o = await open({ call: ["api"] }, { on: budget });
  assert.is((await o.host.request({ type: "emit", callId: o.callId, kind: "k", data: "y".repeat(100) })).type, "committed");
  // The descriptor's answer (~230 bytes) fits one activation budget of 300 alone, not after the caller's 100.
  const r = await ask(o, { operation: "call", name: "api", tool: "fetch_thing", input: { id: "1" } });
  assert.equal([r.result?.outcome?.status, (r.result?.outcome as { error?: { code: string } }).error?.code], ["error", "budget_exceeded"]);
  await o.host.request({ type: "finish", callId: o.callId });
});

test("a runtime restart with a call operation open: its environment.response is error unknown, the nested call and its caller end unknown", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "brain-envctl-restart-"));
  const token = "envctl-restart-token-0001";
  let first: Brain | undefined = await startBrain({ dataDir, port: 0, token, workspaceRoot });
  let second: Brain | undefined;
  try {
    const up = await upload(first, fixtures.spin!);
    assert.ok(up.status === 200 || up.status === 201);
    const o = await open({ call: ["tools"] }, { on: first, only: [component(spinC, up.digest, "tools")] });
    o.host.send({ type: "environment_request", ref: o.host.nextRef(), callId: o.callId, request: { operation: "call", name: "tools", tool: "spin", input: {} } });
    await waitFor(first, o.sessionId, (x) => x.type === "tool.call_started" && x.data.origin === o.callId);
    await first.close();
    first = undefined;
    second = await startBrain({ dataDir, port: 0, token, workspaceRoot });
    const all = await records(second, o.sessionId);
    assertJournal(all);
    const req = all.find((x) => x.type === "environment.request")!;
    const res = ofType(all, "environment.response").find((x) => x.data.request === req.sequence);
    assert.equal(res?.data.error?.code, "unknown");
    assert.equal(ofType(all, "tool.finished").map((x) => x.data.status), ["unknown", "unknown"]);
  } finally {
    await first?.close();
    await second?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("every frame the runtime sent matched the contract", () => {
  assert.equal(invalidFrames, []);
});

test.run();
