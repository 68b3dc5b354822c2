// Component tools end to end: real components (Rust and JS examples, WAT fixtures) uploaded over
// real HTTP to startBrain, called by the scripted model, results read back from the journal.
import { test } from "uvu";
const uvuTest = test;
import * as assert from "uvu/assert";
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import type { JournalRecord, PlacedTool, ToolContract } from "@aexhq/brain-protocol";
import { api, assertJournal, createSession, memoryBrain, ofType, records, waitFor } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { components, inspectContract, placedComponent, rustMissing, skipNotice, upload } from "./component-helpers.mts";
import type { Built } from "./component-helpers.mts";
import { contractDigest, startBrain } from "../src/index.ts";
import type { ComponentEnvironment } from "../src/index.ts";
import { WorkerPool } from "../src/environments/component/pool.ts";

let brain: Brain;
let built: Built;
let root: string;
const digests: Record<string, string> = {};
// Tests that need the Rust example are skipped, and counted, on a machine without rustc.
const RUST_TESTS = 6;
if (rustMissing) skipNotice(RUST_TESTS, "runtime/test/component.test.ts", rustMissing);
const rustTest = rustMissing ? test.skip : test;
/** Any admitted component, for tests that only need one (the Rust example when it was built). */
const anyDigest = () => digests.rust ?? digests.js!;
const anyBuilt = () => built.rust ?? built.js;

const rustOutput = {
  type: "object",
  properties: { path: { type: "string" }, depth: { type: "integer" }, segments: { type: "array", items: { type: "string" } }, eventSequence: { type: "integer" } },
  required: ["path", "depth", "segments", "eventSequence"],
};
const jsOutput = {
  type: "object",
  properties: { path: { type: "string" }, type: { type: "string" }, writable: { type: "boolean" }, eventSequence: { type: "integer" }, entries: { type: "array" }, size: { type: "integer" } },
  required: ["path", "type", "writable", "eventSequence"],
};

test.before(async () => {
  built = await components();
  root = mkdtempSync(join(tmpdir(), "brain-ws-"));
  brain = await memoryBrain({ workspaceRoot: root });
});

test.after(async () => {
  await brain?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** Runs one user turn whose script calls `calls`, then returns the session's journal. */
async function turn(tools: PlacedTool[], calls: { name: string; input: unknown; deadlineMs?: number }[], beforeMessage?: (sessionId: string) => void, sequential = false): Promise<{ id: string; all: JournalRecord[] }> {
  // One script step runs its calls concurrently; `sequential` gives each call its own step.
  const steps = sequential ? calls.map((c) => ({ toolCalls: [c] })) : [{ toolCalls: calls }];
  const s = await createSession(brain, tools, [...steps, { text: "done" }]);
  beforeMessage?.(s.id);
  const r = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go", wait: true });
  assert.is(r.status, 200, JSON.stringify(r.body));
  const all = await records(brain, s.id);
  assertJournal(all);
  return { id: s.id, all };
}

function resultsOf(all: JournalRecord[]) {
  return ofType(all, "tool.result").map((r) => r.data.outcome);
}
function finishedOf(all: JournalRecord[]) {
  return ofType(all, "tool.finished").map((r) => r.data);
}

test("upload: PUT admits once per digest, HEAD tells whether a digest is known", async () => {
  for (const [name, path] of [...(built.rust ? [["rust", built.rust] as const] : []), ["js", built.js] as const, ...Object.entries(built.fixtures)]) {
    const u = await upload(brain, path);
    if (name === "foreign") continue;
    assert.is(u.status, 201, `${name}: ${JSON.stringify(u.body)}`);
    assert.is(u.body.status, "admitted");
    digests[name] = u.digest;
  }
  const again = await upload(brain, anyBuilt());
  assert.is(again.status, 200);
  const head = await fetch(`${brain.url}/v1/components/${anyDigest()}`, { method: "HEAD", headers: { authorization: `Bearer ${brain.token}` } });
  assert.is(head.status, 200);
  const unknown = await fetch(`${brain.url}/v1/components/${"0".repeat(64)}`, { method: "HEAD", headers: { authorization: `Bearer ${brain.token}` } });
  assert.is(unknown.status, 404);
});

test("upload: a body whose sha256 is not the digest is refused", async () => {
  const res = await fetch(`${brain.url}/v1/components/${"a".repeat(64)}`, { method: "PUT", headers: { authorization: `Bearer ${brain.token}` }, body: new Uint8Array([0, 97, 115, 109]) });
  assert.is(res.status, 400);
  assert.match(((await res.json()) as { error: { message: string } }).error.message, "sha256");
});

test("admission: random bytes are refused as not a component", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-rand-"));
  try {
    const p = join(dir, "random.wasm");
    writeFileSync(p, Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 7919 + 13) % 256)));
    const u = await upload(brain, p);
    assert.is(u.status, 400);
    assert.is(u.body.error.code, "invalid_request");
    assert.match(u.body.error.message, "not a WebAssembly component");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("admission: a jco component built for another world is refused, naming what is missing and extra", async () => {
  const u = await upload(brain, built.fixtures.foreign!);
  assert.is(u.status, 400, JSON.stringify(u.body));
  assert.match(u.body.error.message, "missing export run: func(invocation: invocation)");
  assert.equal(u.body.error.details.missing, ["export run: func(invocation: invocation)"]);
  // A session naming the refused digest gets the same refusal.
  const c = inspectContract();
  const r = await api(brain, "POST", "/v1/sessions", { model: { provider: "scripted", script: [] }, tools: [placedComponent(c, u.digest, "reader", { depth: 1 })] });
  assert.is(r.status, 400);
  assert.match(r.body.error.message, "does not implement brain:tool@0.2.0");
});

test("admission: a session naming a digest that was never uploaded is refused", async () => {
  const r = await api(brain, "POST", "/v1/sessions", { model: { provider: "scripted", script: [] }, tools: [placedComponent(inspectContract(), "b".repeat(64), "reader", { depth: 1 })] });
  assert.is(r.status, 404);
  assert.match(r.body.error.message, "PUT /v1/components/");
});

for (const lang of ["rust", "js"] as const) {
  const output = lang === "rust" ? rustOutput : jsOutput;
  const grant = lang === "js" ? "read" : undefined;
  const test = lang === "rust" ? rustTest : uvuTest;

  test(`${lang}: inspect emits a committed event, then finishes ok with output checked against its schema`, async () => {
    const tool = placedComponent(inspectContract(output), digests[lang]!, "reader", { depth: 2 }, grant);
    const { all } = await turn([tool], [{ name: "inspect", input: { path: "/workspace" } }], (id) => {
      mkdirSync(join(root, id, "a", "b", "c"), { recursive: true });
      writeFileSync(join(root, id, "a", "hello.txt"), "hello");
    });
    const events = ofType(all, "tool.event");
    assert.is(events.length, 1);
    assert.is(events[0]!.data.kind, "inspect_started");
    assert.equal(events[0]!.data.data, { path: "/workspace" });
    const [outcome] = resultsOf(all);
    assert.is(outcome!.status, "ok", JSON.stringify(outcome));
    const value = (outcome as { value: Record<string, unknown> }).value;
    // emit returned the committed sequence to the guest.
    assert.is(value.eventSequence, events[0]!.sequence);
    if (lang === "rust") {
      assert.equal(value.segments, ["workspace"]);
      assert.is(value.depth, 2);
    } else {
      assert.is(value.type, "directory");
      assert.equal(value.entries, [{ name: "a", type: "directory", entries: [{ name: "b", type: "directory" }, { name: "hello.txt", type: "file", size: 5 }] }]);
    }
    assert.equal(finishedOf(all).map((f) => f.status), ["ok"]);
    assert.is(ofType(all, "turn.completed").length, 1);
  });

  test(`${lang}: input that fails the input schema is invalid_input and the guest never runs`, async () => {
    const tool = placedComponent(inspectContract(output), digests[lang]!, "reader", { depth: 1 }, grant);
    const { all } = await turn([tool], [{ name: "inspect", input: { path: 42 } }]);
    assert.is(ofType(all, "tool.event").length, 0);
    const f = finishedOf(all);
    assert.is(f[0]!.status, "error");
    assert.is(f[0]!.error!.code, "invalid_input");
  });

  test(`${lang}: output that fails the advertised output schema is invalid_output`, async () => {
    const strict = { ...output, required: [...output.required, "missingField"] };
    const tool = placedComponent(inspectContract(strict), digests[lang]!, "reader", { depth: 1 }, grant);
    const { all } = await turn([tool], [{ name: "inspect", input: { path: "/workspace" } }]);
    const f = finishedOf(all);
    assert.is(f[0]!.status, "error");
    assert.is(f[0]!.error!.code, "invalid_output");
    assert.ok(JSON.stringify(f[0]!.error!.details).includes("missingField"));
  });

  test(`${lang}: warm invocations of one binding reuse its worker and instance (one cold start for three calls)`, async () => {
    const env = brain.internals.environments.get("component") as ComponentEnvironment;
    const tool = placedComponent(inspectContract(output), digests[lang]!, "reader", { depth: 1 }, grant);
    const before = env.workersStarted;
    const call = { name: "inspect", input: { path: "/workspace" } };
    const { all } = await turn([tool], [call, call, call], undefined, true);
    assert.equal(finishedOf(all).map((f) => f.status), ["ok", "ok", "ok"]);
    assert.is(env.workersStarted - before, 1);
    // Same instance, fresh per-call state: every call emitted its own event and saw its own sequence.
    const events = ofType(all, "tool.event").map((e) => e.sequence);
    const seen = resultsOf(all).map((o) => (o as { value: { eventSequence: number } }).value.eventSequence);
    assert.equal(seen, events);
  });
}

test("instance reuse: guest state survives clean returns within a binding; another binding starts fresh", async () => {
  const counterOutput = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
  const a = placedComponent(inspectContract(counterOutput, "count_a"), digests.counter!, "a", { depth: 1 });
  const b = placedComponent(inspectContract(counterOutput, "count_b"), digests.counter!, "b", { depth: 1 });
  const { all } = await turn([a, b], [
    { name: "count_a", input: { path: "x" } },
    { name: "count_a", input: { path: "x" } },
    { name: "count_b", input: { path: "x" } },
    { name: "count_a", input: { path: "x" } },
  ], undefined, true);
  const byCall = new Map(ofType(all, "tool.call_started").map((r) => [r.data.callId, r.data.tool]));
  const counts = ofType(all, "tool.result").map((r) => `${byCall.get(r.data.callId)}=${(r.data.outcome as { value: { n: number } }).value.n}`);
  assert.equal(counts, ["count_a=1", "count_a=2", "count_b=1", "count_a=3"]);
});

test("warm-up: a prewarmed worker's throwaway run of the tool's smallest input writes nothing to the workspace or the journal; the real call does", async () => {
  const env = brain.internals.environments.get("component") as ComponentEnvironment;
  // The schema admits one input only, a write: the warm-up makes up exactly the call the model makes.
  const c: Omit<ToolContract, "digest"> = {
    name: "probe",
    description: "Writes warm.txt.",
    inputSchema: { type: "object", properties: { op: { const: "write" }, path: { const: "warm.txt" }, data: { const: "x" } }, required: ["op", "path", "data"] },
  };
  const writer = placedComponent({ ...c, digest: contractDigest(c) }, digests.fsprobe!, "warm-writer", { depth: 1 }, "write");
  const warmed = env.workersWarmedUp;
  const s = await createSession(brain, [writer], [{ toolCalls: [{ name: "probe", input: { op: "write", path: "warm.txt", data: "x" } }] }, { text: "done" }]);
  assert.is(env.workersWarmedUp, warmed + 1, "session creation ran the warm-up");
  assert.equal(readdirSync(join(root, s.id)), [], "the warm-up wrote into the session's workspace");
  assert.equal((await records(brain, s.id)).map((r) => r.type), ["session.created"]);
  const r = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go", wait: true });
  assert.is(r.status, 200);
  assert.equal(resultsOf(await records(brain, s.id)), [{ status: "ok", value: { op: "write", value: 1 } }]);
  assert.equal(readdirSync(join(root, s.id)), ["warm.txt"]);
});

test("warm-up: a guest that never returns on the made-up input holds its session's creation for at most 3 s, and later sessions start it without a warm-up", async () => {
  const b = await memoryBrain();
  try {
    const env = b.internals.environments.get("component") as ComponentEnvironment;
    const { digest } = await upload(b, built.fixtures.spin!);
    const tool = placedComponent(inspectContract(), digest, "spinner", { depth: 1 });
    const t0 = Date.now();
    await createSession(b, [tool], []);
    const first = Date.now() - t0;
    // The warm-up's worker was killed after 3 s and a plain one started in its place.
    assert.ok(first >= 3000, `created in ${first} ms`);
    assert.is(env.workersStarted, 2);
    assert.is(env.workersAlive, 1);
    assert.is(env.workersWarmedUp, 0);
    const t1 = Date.now();
    await createSession(b, [tool], []);
    assert.ok(Date.now() - t1 < first, "the second session waited for a warm-up again");
    assert.is(env.workersStarted, 3);
  } finally {
    await b.close();
  }
});

test("memory cap: a guest growing linear memory without bound ends as error naming the limit; its worker is retired; the runtime keeps serving", async () => {
  const env = brain.internals.environments.get("component") as ComponentEnvironment;
  const grow = placedComponent(inspectContract(), digests.grow!, "grower", { depth: 1 });
  const counterOutput = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
  const counter = placedComponent(inspectContract(counterOutput, "count"), digests.counter!, "grower", { depth: 1 });
  let before = 0;
  const t0 = Date.now();
  // Counted from the session's creation on (its prewarmed worker may have been started twice: the
  // warm-up run grows to the cap too, which can outlast the warm-up's 3 s on a loaded machine).
  const { all } = await turn([grow], [{ name: "inspect", input: { path: "x" } }, { name: "inspect", input: { path: "x" } }], () => (before = env.workersStarted), true);
  assert.ok(Date.now() - t0 < 20_000);
  const f = finishedOf(all);
  assert.equal(f.map((x) => x.status), ["error", "error"]);
  assert.is(f[0]!.error!.code, "tool_error");
  // Default cap 256 MiB (BRAIN_COMPONENT_MEMORY_MB); the guest reached it and its grow failed.
  assert.match(f[0]!.error!.message, /linear memory limit \(25\d of 256 MiB, BRAIN_COMPONENT_MEMORY_MB\)/);
  // A trapped instance is never reused: the first call ran on the prewarmed worker, the second got a new one.
  assert.is(env.workersStarted - before, 1);
  const after = await turn([counter], [{ name: "count", input: { path: "x" } }]);
  assert.equal(finishedOf(after.all).map((x) => x.status), ["ok"]);
});

rustTest("telemetry reaches the runtime's diagnostics but never the journal", async () => {
  const env = brain.internals.environments.get("component") as ComponentEnvironment;
  const tool = placedComponent(inspectContract(rustOutput), digests.rust!, "reader", { depth: 1 });
  const { all } = await turn([tool], [{ name: "inspect", input: { path: "x/y" } }]);
  const callId = ofType(all, "tool.call_started")[0]!.data.callId;
  assert.ok(env.telemetry.some((t) => t.callId === callId && t.message === "inspect-rust: run started"));
  assert.not.ok(JSON.stringify(all).includes("inspect-rust: run started"));
});

rustTest("deadline: a guest stuck in a loop ends as timeout by worker termination, and the runtime keeps serving", async () => {
  const spin = placedComponent(inspectContract(), digests.spin!, "spinner", { depth: 1 });
  const t0 = Date.now();
  const { all } = await turn([spin], [{ name: "inspect", input: { path: "x" }, deadlineMs: 300 }]);
  assert.equal(finishedOf(all).map((f) => f.status), ["timeout"]);
  assert.ok(Date.now() - t0 < 15_000);
  // Still serving: another component call completes normally.
  const tool = placedComponent(inspectContract(rustOutput), digests.rust!, "reader", { depth: 1 });
  const after = await turn([tool], [{ name: "inspect", input: { path: "a/b" } }]);
  assert.equal(finishedOf(after.all).map((f) => f.status), ["ok"]);
});

test("shutdown: a component call still running when the runtime closes stays open in the journal; the next start ends it unknown", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-close-"));
  try {
    let b = await startBrain({ dataDir: dir, port: 0 });
    const { digest } = await upload(b, built.fixtures.spin!);
    const tool = placedComponent(inspectContract(), digest, "spinner", { depth: 1 });
    const s = await createSession(b, [tool], [{ toolCalls: [{ name: "inspect", input: { path: "x" } }] }, { text: "done" }]);
    await api(b, "POST", `/v1/sessions/${s.id}/messages`, { text: "go" });
    await waitFor(b, s.id, (r) => r.type === "tool.call_started");
    // Its worker is started (a cold start can take long on a loaded machine), then the guest loops.
    const env = b.internals.environments.get("component") as ComponentEnvironment;
    for (let i = 0; env.workersStarted === 0 && i < 3000; i++) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 200));
    const token = b.token;
    // Closing kills the worker; that must not be recorded as the call's end (a made-up tool_error).
    await b.close();
    b = await startBrain({ dataDir: dir, port: 0, token });
    try {
      const all = await records(b, s.id);
      assert.is(ofType(all, "tool.result").length, 0, JSON.stringify(ofType(all, "tool.result")));
      assert.equal(ofType(all, "tool.finished").map((f) => f.data.status), ["unknown"]);
    } finally {
      await b.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("shutdown while a call's worker is still starting: the pool starts no worker after close(), and hands out none it killed", async () => {
  // A worker started after close() was never terminated: with a looping guest (the shutdown test
  // above, closing within a slow cold start) it kept the test process alive after the suite.
  const dir = (brain.internals.environments.get("component") as ComponentEnvironment).store.transpiledDir(digests.counter!);
  // Closed while the call waits for the modules' compile: no worker is started at all.
  const compiling = new WorkerPool(256);
  const first = compiling.acquire("k", dir, undefined);
  await compiling.close();
  assert.ok((await first) === undefined, "a worker was started after close()");
  assert.is(compiling.started, 0);
  // Closed while its worker starts (not ready yet): the worker is killed and nobody gets it.
  const starting = new WorkerPool(256);
  const second = starting.acquire("k", dir, undefined);
  while (starting.started === 0) await new Promise((r) => setImmediate(r));
  await starting.close();
  assert.ok((await second) === undefined, "a worker close() killed was handed out");
  assert.is(starting.started, 1);
});

test("a finish with outcome-json that is not JSON becomes error/invalid_output", async () => {
  const { all } = await turn([placedComponent(inspectContract(), digests.malformed!, "m", { depth: 1 })], [{ name: "inspect", input: { path: "x" } }]);
  const f = finishedOf(all);
  assert.is(f[0]!.status, "error");
  assert.is(f[0]!.error!.code, "invalid_output");
});

test("run returning without finish ends the call as error/tool_error", async () => {
  const { all } = await turn([placedComponent(inspectContract(), digests.noop!, "n", { depth: 1 })], [{ name: "inspect", input: { path: "x" } }]);
  const f = finishedOf(all);
  assert.is(f[0]!.status, "error");
  assert.is(f[0]!.error!.code, "tool_error");
  assert.match(f[0]!.error!.message, "without calling host.finish");
});

test("returned() ends the synchronous phase before the guest's later result and finish", async () => {
  const { id } = await turn([placedComponent(inspectContract(), digests.background!, "bg", { depth: 1 })], [{ name: "inspect", input: { path: "x" } }]);
  // The turn may complete on the result, before the background finish is committed.
  const all = await waitFor(brain, id, (r) => r.type === "tool.finished");
  const types = all.map((r) => r.type).filter((t) => t.startsWith("tool."));
  assert.equal(types, ["tool.call_started", "tool.returned", "tool.result", "tool.finished"]);
  const result = ofType(all, "tool.result")[0]!;
  assert.equal(result.data.outcome, { status: "ok", value: { later: true } });
  assert.is(result.data.content, "later");
});

test("read grant: the guest sees only the session workspace; a write fails inside the guest and nothing on disk changes", async () => {
  const tool = placedComponent(inspectContract(jsOutput), digests.js!, "reader", { depth: 1 }, "read");
  let before: string[] = [];
  const { id, all } = await turn([tool], [{ name: "inspect", input: { path: "/workspace" } }, { name: "inspect", input: { path: "../" } }, { name: "inspect", input: { path: "/etc" } }], (sid) => {
    writeFileSync(join(root, sid, "keep.txt"), "k");
    before = readdirSync(join(root, sid)).sort();
  });
  const results = resultsOf(all) as Array<{ status: string; value?: { writable: boolean }; error?: { code: string } }>;
  const ok = results.find((r) => r.status === "ok")!;
  assert.is(ok.value!.writable, false);
  const errors = finishedOf(all).filter((f) => f.status === "error").map((f) => f.error!.code).sort();
  assert.equal(errors, ["outside_workspace", "outside_workspace"]);
  assert.equal(readdirSync(join(root, id)).sort(), before);
});

test("isolation: two bindings with different grants in one session get their own authority", async () => {
  const reader = placedComponent(inspectContract(jsOutput, "inspect_read"), digests.js!, "reader", { depth: 1 }, "read");
  const writer = placedComponent(inspectContract(jsOutput, "inspect_write"), digests.js!, "writer", { depth: 1 }, "write");
  const none = placedComponent(inspectContract(jsOutput, "inspect_none"), digests.js!, "nofs", { depth: 1 });
  const { id, all } = await turn([reader, writer, none], [
    { name: "inspect_read", input: { path: "/workspace" } },
    { name: "inspect_write", input: { path: "/workspace" } },
    { name: "inspect_none", input: { path: "/workspace" } },
  ]);
  const byCall = new Map(ofType(all, "tool.call_started").map((r) => [r.data.callId, r.data.tool]));
  const outcome = (tool: string) => {
    const r = ofType(all, "tool.result").find((x) => byCall.get(x.data.callId) === tool);
    // No result (seen rarely under load): say how the call ended instead of failing on undefined.
    const finished = ofType(all, "tool.finished").find((x) => byCall.get(x.data.callId) === tool);
    assert.ok(r !== undefined, `${tool} recorded no tool.result; it finished ${JSON.stringify(finished?.data)}`);
    return r.data.outcome as { status: string; value?: { writable: boolean }; error?: { code: string } };
  };
  assert.is(outcome("inspect_read").value!.writable, false);
  assert.is(outcome("inspect_write").value!.writable, true);
  const noneFinished = ofType(all, "tool.finished").find((x) => byCall.get(x.data.callId) === "inspect_none")!;
  assert.is(noneFinished.data.error!.code, "no_workspace");
  // The write grant's probe left nothing behind.
  assert.equal(readdirSync(join(root, id)), []);
});

/** The fsprobe fixture's contract: one raw WASI operation per call. */
function probeContract(name = "probe"): ToolContract {
  const c: Omit<ToolContract, "digest"> = {
    name,
    description: "One raw WASI filesystem operation.",
    inputSchema: { type: "object", properties: { op: { type: "string" }, path: { type: "string" }, data: { type: "string" }, target: { type: "string" } }, required: ["op", "path"] },
  };
  return { ...c, digest: contractDigest(c) };
}

test("symlinks: links in the workspace that lead outside cannot be followed to read, list or write, nor created by the guest; nothing outside changes", async () => {
  const outside = mkdtempSync(join(tmpdir(), "brain-outside-"));
  try {
    writeFileSync(join(outside, "secret.txt"), "secret");
    const writer = placedComponent(probeContract(), digests.fsprobe!, "writer", { depth: 1 }, "write");
    const reader = placedComponent(probeContract("probe_read"), digests.fsprobe!, "reader", { depth: 1 }, "read");
    const attempts = [
      { op: "read", path: "inner/file.txt" }, // a link that stays inside works
      { op: "read", path: "abs-file" },
      { op: "read", path: "rel-file" },
      { op: "read", path: "abs-dir/secret.txt" },
      { op: "read", path: "rel-dir/secret.txt" },
      { op: "read", path: "sub/up/secret.txt" }, // a link in a subfolder, relative, climbing out
      { op: "list", path: "rel-dir" },
      { op: "stat", path: "abs-dir" },
      { op: "readlink", path: "abs-file" },
      { op: "write", path: "abs-file", data: "pwned" },
      { op: "write", path: "rel-file", data: "pwned" },
      { op: "write", path: "rel-dir/new.txt", data: "pwned" },
      { op: "write", path: "dangling", data: "pwned" }, // a link to a file that does not exist yet
      { op: "mkdir", path: "rel-dir/newdir" },
      { op: "symlink", path: "mine", target: "../../" },
      { op: "write", path: "ok.txt", data: "fine" }, // writing inside still works
    ];
    const calls = [...attempts.map((input) => ({ name: "probe", input })), { name: "probe_read", input: { op: "read", path: "rel-file" } }, { name: "probe_read", input: { op: "read", path: "inner/file.txt" } }];
    let ws = "";
    const { all } = await turn([writer, reader], calls, (sid) => {
      ws = join(root, sid);
      const rel = relative(ws, outside);
      mkdirSync(join(ws, "sub"), { recursive: true });
      mkdirSync(join(ws, "real"));
      writeFileSync(join(ws, "real", "file.txt"), "inside");
      symlinkSync("real", join(ws, "inner"));
      symlinkSync(outside, join(ws, "abs-dir"));
      symlinkSync(join(outside, "secret.txt"), join(ws, "abs-file"));
      symlinkSync(rel, join(ws, "rel-dir"));
      symlinkSync(`${rel}/secret.txt`, join(ws, "rel-file"));
      symlinkSync(`../${rel}`, join(ws, "sub", "up"));
      symlinkSync(`${rel}/new2.txt`, join(ws, "dangling"));
    }, true);
    const results = ofType(all, "tool.result").map((r) => r.data.outcome as { status: string; value?: { value: unknown }; error?: { code: string } });
    const summary = results.map((o) => (o.status === "ok" ? `ok:${JSON.stringify(o.value!.value)}` : o.error!.code));
    assert.equal(summary, [
      'ok:"inside"',
      ...Array.from({ length: attempts.length - 2 }, () => "wasi:not-permitted"),
      "ok:4",
      "wasi:not-permitted",
      'ok:"inside"',
    ]);
    // Nothing outside changed; inside, only ok.txt was written.
    assert.equal(readdirSync(outside), ["secret.txt"]);
    assert.is(readFileSync(join(outside, "secret.txt"), "utf8"), "secret");
    assert.is(readFileSync(join(ws, "ok.txt"), "utf8"), "fine");
    assert.not.ok(readdirSync(ws).includes("mine"));
  } finally {
    rmSync(outside, { recursive: true, force: true });
  }
});

test("unsupported runtime: a server started without the component environment refuses component placements at session creation", async () => {
  const plain = await memoryBrain({ components: false });
  try {
    assert.not.ok(plain.internals.environments.has("component"));
    const r = await api(plain, "POST", "/v1/sessions", { model: { provider: "scripted", script: [] }, tools: [placedComponent(inspectContract(), anyDigest(), "reader", { depth: 1 })] });
    assert.is(r.status, 400);
    assert.is(r.body.error.code, "unsupported");
    assert.match(r.body.error.message, "does not run the component environment (tool inspect)");
    assert.equal(r.body.error.details, { tool: "inspect", placement: "component" });
    // Nor can one be uploaded: the route says why.
    const put = await upload(plain, anyBuilt());
    assert.is(put.status, 400);
    assert.is(put.body.error.code, "unsupported");
    assert.match(put.body.error.message, "without the component environment");
  } finally {
    await plain.close();
  }
});

test("unsupported grants and placement kinds fail at session creation with an unsupported error naming them", async () => {
  const base = () => placedComponent(inspectContract(), anyDigest(), "reader", { depth: 1 }) as unknown as { placement: Record<string, unknown> };
  const cases: Array<[string, (p: Record<string, unknown>) => void, RegExp, Record<string, unknown>]> = [
    ["a grant kind", (p) => (p.network = { outbound: true }), /asks for a "network" grant, which this runtime does not support/, { tool: "inspect", env: "reader", grant: "network" }],
    ["a filesystem grant kind", (p) => (p.filesystem = { home: "read" }), /asks for a filesystem.home grant/, { tool: "inspect", env: "reader", grant: "filesystem.home" }],
    ["a workspace mode", (p) => (p.filesystem = { workspace: "admin" }), /asks for filesystem.workspace "admin", which this runtime does not support \(supported: read, write\)/, { tool: "inspect", env: "reader", grant: "filesystem.workspace", mode: "admin" }],
    ["a placement kind (another runtime)", (p) => (p.kind = "python"), /placement kind "python", which this runtime does not support/, { tool: "inspect", placement: "python", supported: ["host", "component", "descriptor", "http", "http_plain", "managed", "mcp"] }],
  ];
  for (const [what, mutate, message, details] of cases) {
    const tool = base();
    mutate(tool.placement);
    const r = await api(brain, "POST", "/v1/sessions", { model: { provider: "scripted", script: [] }, tools: [tool] });
    assert.is(r.status, 400, what);
    assert.is(r.body.error.code, "unsupported", what);
    assert.match(r.body.error.message, message, what);
    assert.equal(r.body.error.details, details, what);
  }
  // An invalid body for another reason keeps the ordinary invalid_request with schema issues.
  const bad = base();
  bad.placement.digest = "not-a-digest";
  const r = await api(brain, "POST", "/v1/sessions", { model: { provider: "scripted", script: [] }, tools: [bad] });
  assert.is(r.body.error.code, "invalid_request");
});

test("a filesystem grant on a server without a workspace allow-list fails at session creation", async () => {
  const plain = await memoryBrain();
  try {
    const u = await upload(plain, built.js);
    assert.is(u.status, 201);
    const r = await api(plain, "POST", "/v1/sessions", { model: { provider: "scripted", script: [] }, tools: [placedComponent(inspectContract(), u.digest, "reader", { depth: 1 }, "read")] });
    assert.is(r.status, 403);
    assert.is(r.body.error.code, "forbidden");
    assert.match(r.body.error.message, "BRAIN_WORKSPACE_ROOT");
  } finally {
    await plain.close();
  }
});

test.run();
