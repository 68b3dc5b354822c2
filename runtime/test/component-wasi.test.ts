// Components whose toolchain imports WASI beyond the grant (sockets, unknown interfaces) run, and
// get their interface's denial when they use it; a guest's stderr reaches the server's log and the
// tool_error of a trapped call. Real components (WAT fixtures embedded into worlds that import
// wasi:sockets / wasi:cli stderr, and worlds built here with jco) over real HTTP.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JournalRecord, PlacedTool, ToolContract } from "@aexhq/brain-protocol";
import { api, assertJournal, createSession, memoryBrain, ofType, records } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { components, placedComponent, upload } from "./component-helpers.mts";
import type { Built } from "./component-helpers.mts";
import { contractDigest, stderrLogger } from "../src/index.ts";
import type { ComponentEnvironment } from "../src/index.ts";
// @ts-ignore: plain .mjs without declarations (it runs inside worker threads).
import { NotGrantedError, http, withDenials } from "../src/environments/component/wasi-denied.mjs";
import { wasiLinking } from "../src/environments/component/world.ts";

let brain: Brain;
let built: Built;
let scratch: string;
const logLines: Array<{ level: string; message: string; [k: string]: unknown }> = [];
const digests: Record<string, string> = {};

test.before(async () => {
  built = await components();
  scratch = mkdtempSync(join(tmpdir(), "brain-wasi-"));
  brain = await memoryBrain({ logger: stderrLogger({ level: "debug", json: true, write: (line) => logLines.push(JSON.parse(line)) }) });
  for (const name of ["netprobe", "stderr"]) {
    const u = await upload(brain, built.fixtures[name]!);
    assert.is(u.status, 201, `${name}: ${JSON.stringify(u.body)}`);
    digests[name] = u.digest;
  }
});

test.after(async () => {
  await brain?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

function contract(name: string): ToolContract {
  const c = {
    name,
    description: "A WASI probe.",
    inputSchema: { type: "object", properties: { op: { type: "string" }, say: { type: "string" } }, additionalProperties: false },
  };
  return { ...c, digest: contractDigest(c) };
}

async function call(tool: PlacedTool, input: unknown): Promise<{ outcome: any; all: JournalRecord[] }> {
  const s = await createSession(brain, [tool], [{ toolCalls: [{ name: tool.contract.name, input }] }, { text: "done" }]);
  const r = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go", wait: true });
  assert.is(r.status, 200, JSON.stringify(r.body));
  const all = await records(brain, s.id);
  assertJournal(all);
  return { outcome: ofType(all, "tool.result")[0]!.data.outcome, all };
}

/** Builds a component (dummy core module) for `world`, appended to contract/tool.wit, and uploads it. */
async function uploadWorld(world: string, wit: string): Promise<{ status: number; body: any }> {
  const { componentEmbed, componentNew } = await import("@bytecodealliance/jco-transpile/wasm-tools");
  const { readFileSync } = await import("node:fs");
  const toolWit = readFileSync(new URL("../../contract/tool.wit", import.meta.url), "utf8");
  const bytes = await componentNew(await componentEmbed({ dummy: true, witSource: `${toolWit}\n${wit}`, world }));
  const p = join(scratch, `${world}.wasm`);
  writeFileSync(p, bytes);
  return upload(brain, p);
}

const probe = () => placedComponent(contract("probe"), digests.netprobe!, "net", {});

test("a component importing wasi:sockets (and an unknown WASI interface) is admitted and runs while it does not use them", async () => {
  const { outcome } = await call(probe(), { op: "none" });
  assert.equal(outcome, { status: "ok", value: { op: "n", tag: 0, code: "00" } });
});

for (const [op, letter] of [["tcp", "t"], ["udp", "u"], ["dns", "d"]] as const) {
  test(`wasi:sockets ${op}: the call gets the interface's own error value, access-denied`, async () => {
    const { outcome } = await call(probe(), { op });
    // tag 1 = err; code 1 = error-code.access-denied in wasi:sockets/network.
    assert.equal(outcome, { status: "ok", value: { op: letter, tag: 1, code: "01" } });
  });
}

test("wasi:http: a request the guest built (the shim's fields and outgoing-request) is refused by handle with error-code HTTP-request-denied", async () => {
  const { outcome } = await call(probe(), { op: "http" });
  // tag 1 = err; code 15 = error-code.HTTP-request-denied in wasi:http/types.
  assert.equal(outcome, { status: "ok", value: { op: "h", tag: 1, code: "15" } });
});

test("an unknown WASI interface has no error value to refuse with: calling it traps, naming it", async () => {
  const { outcome } = await call(probe(), { op: "x" });
  assert.is(outcome.status, "error");
  assert.is(outcome.error.code, "tool_error");
  assert.match(outcome.error.message, "component trapped");
  assert.match(outcome.error.message, "wasi:example/unlisted ping is not available to component tools");
});

test("after a denial the binding's warm instance serves the next call", async () => {
  const tool = probe();
  const s = await createSession(brain, [tool], [{ toolCalls: [{ name: "probe", input: { op: "tcp" } }] }, { toolCalls: [{ name: "probe", input: { op: "none" } }] }, { text: "done" }]);
  const r = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go", wait: true });
  assert.is(r.status, 200);
  const outcomes = ofType(await records(brain, s.id), "tool.result").map((f) => f.data.outcome);
  assert.equal(outcomes, [{ status: "ok", value: { op: "t", tag: 1, code: "01" } }, { status: "ok", value: { op: "n", tag: 0, code: "00" } }]);
});

test("prewarm: a session's first call finds the worker started at session creation; deleting the session ends it", async () => {
  const env = brain.internals.environments.get("component") as unknown as ComponentEnvironment;
  const started = env.workersStarted;
  const alive = env.workersAlive;
  const s = await createSession(brain, [probe()], [{ toolCalls: [{ name: "probe", input: { op: "none" } }] }, { text: "done" }]);
  assert.is(env.workersStarted, started + 1, "session creation started the binding's worker");
  assert.is(env.workersAlive, alive + 1);
  const r = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go", wait: true });
  assert.is(r.status, 200);
  assert.equal(ofType(await records(brain, s.id), "tool.result")[0]!.data.outcome, { status: "ok", value: { op: "n", tag: 0, code: "00" } });
  assert.is(env.workersStarted, started + 1, "the first call started no worker");
  const d = await api(brain, "DELETE", `/v1/sessions/${s.id}`);
  assert.ok(d.status === 200 || d.status === 204, JSON.stringify(d.body));
  assert.is(env.workersAlive, alive, "the deleted session's worker ended");
});

test("still refused at upload: an import of a non-WASI interface, and WASI outside 0.2.x", async () => {
  const acme = await uploadWorld("acme", "world acme { include tool; import acme:thing/api@1.0.0; }\npackage acme:thing@1.0.0 { interface api { f: func(); } }");
  assert.is(acme.status, 400, JSON.stringify(acme.body));
  assert.is(acme.body.error.code, "invalid_request");
  assert.match(acme.body.error.message, "extra import acme:thing/api@1.0.0");
  const old = await uploadWorld("old", "world old { include tool; import wasi:sockets/network@0.3.0; }\npackage wasi:sockets@0.3.0 { interface network { resource network; } }");
  assert.is(old.status, 400, JSON.stringify(old.body));
  assert.match(old.body.error.message, "extra import wasi:sockets/network@0.3.0");
  const rc = await uploadWorld("rc", "world rc { include tool; import wasi:sockets/network@0.2.0-rc-2023-11-10; }\npackage wasi:sockets@0.2.0-rc-2023-11-10 { interface network { resource network; } }");
  assert.is(rc.status, 400, JSON.stringify(rc.body));
  // WASI 0.2.x at any patch version is linked: granted, denied or trapping.
  assert.is(wasiLinking("wasi:filesystem/types@0.2.3"), "granted");
  assert.is(wasiLinking("wasi:http/outgoing-handler@0.2.10"), "denied");
  assert.is(wasiLinking("wasi:keyvalue/store@0.2.0"), "trapping");
  assert.is(wasiLinking("wasi:io/streams@0.2.0-rc-2023-11-10"), undefined);
});

test("still refused at upload: a component that does not export brain:tool's run", async () => {
  const u = await uploadWorld("norun", "world norun { import wasi:sockets/network@0.2.0; export go: func(); }\npackage wasi:sockets@0.2.0 { interface network { resource network; } }");
  assert.is(u.status, 400, JSON.stringify(u.body));
  assert.match(u.body.error.message, "missing export run: func(invocation: invocation)");
});

test("the import object: wasi:http handle refused with HTTP-request-denied, the shim's sockets replaced, other WASI traps by name", () => {
  const imports = withDenials({ "wasi:http/types": { Fields: class {} }, "wasi:sockets/tcp-create-socket": { createTcpSocket: () => "a real socket" } });
  assert.throws(() => imports["wasi:http/outgoing-handler"].handle({}, undefined), (e: unknown) => (e as { tag?: string }).tag === "HTTP-request-denied");
  assert.ok(http({}).hasOwnProperty("wasi:http/types"));
  // The shim's sockets never reach a guest: the refusing ones replace them.
  assert.throws(() => imports["wasi:sockets/tcp-create-socket"].createTcpSocket("ipv4"), (e: unknown) => e === "access-denied");
  assert.throws(() => imports["wasi:keyvalue/store"].open("x"), (e: unknown) => e instanceof NotGrantedError && /wasi:keyvalue\/store open/.test((e as Error).message));
  // Not mistaken for a promise by anything that awaits it.
  assert.is(imports["wasi:keyvalue/store"].then, undefined);
});

test("stderr: a guest that writes to stderr then traps shows the stderr tail in its tool_error, and the server log has it", async () => {
  const tool = placedComponent(contract("panics"), digests.stderr!, "err", {});
  const { outcome, all } = await call(tool, { say: "index out of bounds: the len is 3 but the index is 7" });
  assert.is(outcome.error.code, "tool_error");
  assert.match(outcome.error.message, /^component trapped: .*unreachable/);
  assert.match(outcome.error.message, '\nstderr:\nguest panicked: {"say":"index out of bounds: the len is 3 but the index is 7"}');
  const callId = ofType(all, "tool.call_started")[0]!.data.callId;
  const logged = logLines.find((l) => l.message.startsWith("component stderr:") && l.callId === callId);
  assert.ok(logged, JSON.stringify(logLines.slice(-5)));
  assert.is(logged!.level, "warn");
  assert.match(logged!.message, "index out of bounds");
  assert.is(logged!.tool, "panics");
});

test("stderr: the tail in tool_error is bounded, and the server's secrets are redacted from it and from the log", async () => {
  const tool = placedComponent(contract("panics"), digests.stderr!, "err", {});
  const say = `${"x".repeat(20_000)} token=${brain.token} end`;
  const { outcome, all } = await call(tool, { say });
  const message: string = outcome.error.message;
  assert.ok(message.length < 2300, `${message.length}`);
  assert.match(message, /stderr \(last 2000 characters of 200\d\d bytes\):/);
  assert.match(message, "token=[redacted] end");
  assert.not.match(message, brain.token);
  const callId = ofType(all, "tool.call_started")[0]!.data.callId;
  const logged = logLines.find((l) => l.message.startsWith("component stderr:") && l.callId === callId)!;
  assert.ok(logged.message.length < 8300, `${logged.message.length}`);
  assert.is(logged.bytes, Buffer.byteLength(`guest panicked: ${JSON.stringify({ say })}\n`));
  assert.not.match(JSON.stringify(logged), brain.token);
});

test.run();
