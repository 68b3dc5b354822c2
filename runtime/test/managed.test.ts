// Brain-managed JS hosts end to end: real npm-packed packages (the packaged example, built by its
// prepack with tsc + brain-tools, and a probe fixture) uploaded with their dependencies over real
// HTTP, placed with runtime "node" and "deno", started by the runtime as real subprocesses under
// their permission flags, and called by the scripted model.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { JournalRecord, PlacedTool, ToolContract } from "@aexhq/brain-protocol";
import { startBrain } from "../src/index.ts";
import { TestHost } from "./helpers/host.ts";
import { api, assertJournal, createSession, memoryBrain, ofType, records, waitFor } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { managedUpload, packFolder, packWorkspaces, repoRoot } from "./helpers/managed-package.ts";
import type { Upload } from "./helpers/managed-package.ts";
import type { ManagedEnvironment } from "../src/environments/managed/environment.ts";
import { SqliteStore } from "../src/journal/sqlite.ts";

const DENO = join(repoRoot, "node_modules/.bin/deno");
const EXAMPLE = "@aexhq/example-text-tools";
const PROBE = "@aexhq/managed-probe-tools";
const fixture = fileURLToPath(new URL("../test-fixtures/managed-probe-tools/", import.meta.url));

let dir: string;
let root: string;
let brain: Brain;
let example: Upload;
let probe: Upload;
let probeFailing: Upload;
let probeSlow: Upload;
let exampleContracts: Record<string, ToolContract>;
let probeContracts: Record<string, ToolContract>;

test.before(async () => {
  try {
    await setup();
  } catch (e) {
    console.error(e);
    throw e;
  }
});

async function setup(): Promise<void> {
  dir = mkdtempSync(join(realpathSync(tmpdir()), "brain-managed-test-"));
  root = join(dir, "workspaces");
  const packs = packWorkspaces(["generated", "sdk-core", "sdk-node", "examples/packaged-tools"], join(dir, "packs"));
  const sdk = ["@aexhq/brain-protocol", "@aexhq/brain-core", "@aexhq/brain"].map((n) => packs[n]!);
  example = managedUpload(packs[EXAMPLE]!, sdk, join(dir, "uploads"));
  const probeTgz = packFolder(fixture, join(dir, "packs"));
  probe = managedUpload(probeTgz, sdk, join(dir, "uploads"));
  probeFailing = managedUpload(probeTgz, sdk, join(dir, "uploads"), (pkg) => ((pkg.brain as { setup: string }).setup = "./setup-fail.mjs"));
  probeSlow = managedUpload(probeTgz, sdk, join(dir, "uploads"), (pkg) => ((pkg.brain as { setup: string }).setup = "./setup-slow.mjs"));
  // The contracts exactly as each package's own SDK copy advertises them: the example's manifest
  // (brain-tools.json), the probe's from importing it.
  const manifest = JSON.parse(execFileSync("tar", ["-xzOf", packs[EXAMPLE]!, "package/dist/brain-tools.json"], { encoding: "utf8" })) as { tools: Array<{ contract: ToolContract }> };
  exampleContracts = Object.fromEntries(manifest.tools.map((t) => [t.contract.name, t.contract]));
  const mod = (await import(new URL("index.js", `file://${fixture}`).href)) as Record<string, { tool: { contract(): Promise<ToolContract> } }>;
  probeContracts = Object.fromEntries(await Promise.all(Object.values(mod).map(async (f) => {
    const c = await f.tool.contract();
    return [c.name, c] as const;
  })));
  process.env.BRAIN_DENO = DENO;
  brain = await memoryBrain({ workspaceRoot: root });
  for (const u of [example, probe, probeFailing, probeSlow]) {
    const r = await put(brain, u);
    assert.ok(r.status === 201 || r.status === 200, JSON.stringify(r.body));
  }
}

test.after(async () => {
  await brain?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function put(b: { url: string; token: string }, u: { digest: string; bytes: Uint8Array }): Promise<{ status: number; body: any }> {
  const res = await fetch(`${b.url}/v1/packages/${u.digest}`, { method: "PUT", headers: { authorization: `Bearer ${b.token}`, "content-type": "application/gzip" }, body: u.bytes });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

function placed(contract: ToolContract, upload: Upload, pkg: string, exportName: string, env: { name: string; runtime: string; filesystem?: { workspace: "read" | "write" } }, options: Record<string, unknown> = {}): PlacedTool {
  return {
    contract,
    options,
    placement: {
      kind: "managed",
      env: env.name,
      runtime: env.runtime,
      digest: upload.digest,
      executable: { package: pkg, version: pkg === EXAMPLE ? "0.2.0" : "0.1.0", module: ".", export: exportName },
      ...(env.filesystem ? { filesystem: env.filesystem } : {}),
    },
  } as PlacedTool;
}

/** One user turn; each call gets its own script step (they run one after the other). */
async function turn(tools: PlacedTool[], calls: { name: string; input: unknown; deadlineMs?: number }[], before?: (sessionId: string) => void | Promise<void>): Promise<{ id: string; all: JournalRecord[] }> {
  const s = await createSession(brain, tools, [...calls.map((c) => ({ toolCalls: [c] })), { text: "done" }]);
  await before?.(s.id);
  const r = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go", wait: true });
  assert.is(r.status, 200, JSON.stringify(r.body));
  // A call's tool.finished may follow its `returned` (which lets the turn go on) a moment later,
  // and a run that returns without ctx.finish stays open after it: wait until each returned or ended.
  await waitFor(brain, s.id, (_r, rs) => ofType(rs, "tool.call_started").every((c) => rs.some((x) => (x.type === "tool.returned" || x.type === "tool.finished") && x.data.callId === c.data.callId)) && ofType(rs, "tool.call_started").length >= calls.length, 30_000);
  const all = await records(brain, s.id);
  assertJournal(all);
  return { id: s.id, all };
}

/** Each call's outcome, in call order: its last result (a run that returned), else how it finished. */
const finished = (all: JournalRecord[]): any[] =>
  ofType(all, "tool.call_started").map((c) => {
    const callId = `${c.sessionId}:${c.sequence}`;
    const last = ofType(all, "tool.result").filter((r) => r.data.callId === callId).at(-1);
    if (last !== undefined) return last.data.outcome;
    const f = ofType(all, "tool.finished").find((r) => r.data.callId === callId);
    return f === undefined ? { status: "open" } : { status: f.data.status, ...(f.data.error ? { error: f.data.error } : {}) };
  });
const managed = (b: Brain = brain) => b.internals.environments.get("managed") as unknown as ManagedEnvironment;

/** Whether a process exists (a zombie counts: it was not reaped, so whoever started it did not await it). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw e;
  }
}

test("upload: PUT admits a package tarball by digest (again: 200); HEAD knows it; a wrong digest or a non-tarball is refused", async () => {
  const again = await put(brain, example);
  assert.is(again.status, 200);
  assert.equal([again.body.name, again.body.version], [EXAMPLE, "0.2.0"]);
  const head = await fetch(`${brain.url}/v1/packages/${example.digest}`, { method: "HEAD", headers: { authorization: `Bearer ${brain.token}` } });
  assert.is(head.status, 200);
  const wrong = await put(brain, { digest: "0".repeat(64), bytes: example.bytes });
  assert.is(wrong.status, 400);
  assert.match(wrong.body.error.message, /sha256/);
  const bytes = new TextEncoder().encode("not a tarball");
  const { createHash } = await import("node:crypto");
  const junk = await put(brain, { digest: createHash("sha256").update(bytes).digest("hex"), bytes });
  assert.is(junk.status, 400);
  assert.match(junk.body.error.message, /gzip tar/);
});

for (const runtime of ["node", "deno"]) {
  test(`the packaged example placed with runtime "${runtime}" answers calls, emits and finishes`, async () => {
    const env = { name: `text-${runtime}`, runtime };
    const tools = [placed(exampleContracts.count_words!, example, EXAMPLE, "countWords", env), placed(exampleContracts.slugify!, example, EXAMPLE, "slugify", env, { separator: "_" })];
    const { all } = await turn(tools, [{ name: "count_words", input: { text: "one two  three" } }, { name: "slugify", input: { title: "Héllo, Managed World" } }]);
    assert.equal(finished(all), [{ status: "ok", value: { words: 3 } }, { status: "ok", value: { slug: "hello_managed_world" } }]);
    const events = ofType(all, "tool.event").map((r) => [r.data.kind, r.data.data]);
    assert.equal(events, [["slugified", { words: 3 }]]);
    // One host process served both tools of the binding.
    const b = [...managed().bindings.values()].find((x) => x.spec.env === env.name)!;
    assert.is(b.starts, 1);
  });
}

test("setup runs once, before the entrypoint is imported (ordering record), in its own process", async () => {
  const env = { name: "probe", runtime: "node" };
  const { all } = await turn([placed(probeContracts.probe_order!, probe, PROBE, "probeOrder", env)], [{ name: "probe_order", input: {} }, { name: "probe_order", input: {} }]);
  const [a, b] = finished(all);
  assert.is(a.status, "ok", JSON.stringify(a));
  assert.ok(a.value.setup, "the module saw no setup record when it was imported");
  assert.ok(a.value.setup.setupAt <= a.value.importedAt);
  assert.is.not(a.value.setup.pid, a.value.pid);
  assert.equal(b.value, a.value);
});

test("a failing setup ends the binding's calls error (tool_error), once, not retried", async () => {
  const env = { name: "failing", runtime: "node" };
  const { id, all } = await turn([placed(probeContracts.probe_order!, probeFailing, PROBE, "probeOrder", env)], [{ name: "probe_order", input: {} }, { name: "probe_order", input: {} }]);
  const outs = finished(all);
  assert.is(outs.length, 2, JSON.stringify(all.map((r) => [r.type, r.data])));
  for (const o of outs) {
    assert.is(o.status, "error");
    assert.is(o.error.code, "tool_error");
    assert.match(o.error.message, /setup \.\/setup-fail\.mjs failed \(exit code 3\).*cannot prepare/);
  }
  const b = managed().bindings.get(`${id}|failing`)!;
  assert.is(readFileSync(join(b.packageDir, "setup-runs.log"), "utf8"), "ran\n");
  assert.is(b.starts, 0);
});

for (const runtime of ["node", "deno"]) {
  test(`a read grant lets the ${runtime} host read the workspace; writing it and reading elsewhere fail`, async () => {
    const env = { name: `fs-${runtime}`, runtime, filesystem: { workspace: "read" as const } };
    const { all } = await turn(
      [placed(probeContracts.probe_fs!, probe, PROBE, "probeFs", env)],
      [{ name: "probe_fs", input: { op: "read", path: "note.txt" } }, { name: "probe_fs", input: { op: "write", path: "new.txt", text: "x" } }, { name: "probe_fs", input: { op: "read_outside", path: fixture + "package.json" } }],
      (id) => writeFileSync(join(root, id, "note.txt"), "hello workspace"),
    );
    const [read, write, outside] = finished(all).map((o) => o.value);
    assert.equal(read, { ok: true, text: "hello workspace" });
    assert.is(write.ok, false, JSON.stringify(write));
    assert.is(outside.ok, false, JSON.stringify(outside));
  });
}

test("a write grant lets the host write the workspace", async () => {
  const env = { name: "fs-write", runtime: "node", filesystem: { workspace: "write" as const } };
  const { id, all } = await turn([placed(probeContracts.probe_fs!, probe, PROBE, "probeFs", env)], [{ name: "probe_fs", input: { op: "write", path: "out.txt", text: "written" } }]);
  assert.equal(finished(all)[0].value, { ok: true });
  assert.is(readFileSync(join(root, id, "out.txt"), "utf8"), "written");
});

test("a denied grant and an unknown runtime fail at session creation, naming what", async () => {
  const bare = await memoryBrain();
  try {
    await put(bare, probe);
    const create = (tool: PlacedTool) => api(bare, "POST", "/v1/sessions", { model: { provider: "scripted", script: [] }, tools: [tool] });
    const denied = await create(placed(probeContracts.probe_fs!, probe, PROBE, "probeFs", { name: "fs", runtime: "node", filesystem: { workspace: "read" } }));
    assert.is(denied.status, 403);
    assert.is(denied.body.error.code, "forbidden");
    assert.match(denied.body.error.message, /environment fs asks for filesystem.workspace "read".*BRAIN_WORKSPACE_ROOT/);
    const python = await create(placed(probeContracts.probe_order!, probe, PROBE, "probeOrder", { name: "py", runtime: "python" }));
    assert.is(python.status, 400);
    assert.is(python.body.error.code, "unsupported");
    assert.match(python.body.error.message, /runtime "python".*supported: node, deno/);
    const grant = await create({ ...placed(probeContracts.probe_order!, probe, PROBE, "probeOrder", { name: "net", runtime: "node" }), placement: { ...placed(probeContracts.probe_order!, probe, PROBE, "probeOrder", { name: "net", runtime: "node" }).placement, network: "any" } as never });
    assert.is(grant.status, 400);
    assert.is(grant.body.error.code, "unsupported");
    assert.match(grant.body.error.message, /"network" grant/);
    const missing = await create(placed(probeContracts.probe_order!, { ...probe, digest: "e".repeat(64) }, PROBE, "probeOrder", { name: "p", runtime: "node" }));
    assert.is(missing.status, 404);
    assert.match(missing.body.error.message, /was not uploaded: PUT \/v1\/packages/);
  } finally {
    await bare.close();
  }
});

test("a killed managed host ends its open call unknown; the next call starts a new host and works", async () => {
  const env = { name: "crashy", runtime: "node" };
  const tools = [placed(probeContracts.probe_wait!, probe, PROBE, "probeWait", env), placed(probeContracts.probe_order!, probe, PROBE, "probeOrder", env)];
  const { all } = await turn(tools, [{ name: "probe_wait", input: {} }, { name: "probe_order", input: {} }], async (id) => {
    void (async () => {
      const seen = await waitFor(brain, id, (r) => r.type === "tool.event" && (r.data as { kind: string }).kind === "pid", 30_000);
      const pid = (ofType(seen, "tool.event")[0]!.data.data as { pid: number }).pid;
      process.kill(pid, "SIGKILL");
    })().catch((e) => console.error("managed.test: could not kill the host:", e));
  });
  const [lost, next] = finished(all);
  assert.is(lost.status, "unknown", JSON.stringify(lost));
  assert.is(next.status, "ok", JSON.stringify(next));
  const pids = ofType(all, "tool.event").map((r) => (r.data.data as { pid: number }).pid);
  assert.is(pids.length, 2);
  assert.is.not(pids[0], pids[1]);
});

test("session creation prepares each binding (unpack, setup) and starts its host before it answers: the first call's deadline covers only the call", async () => {
  const env = { name: "slow-setup", runtime: "node" };
  // setup-slow.mjs takes 3 s; the call's deadline is 2.5 s, so preparing inside the call would end it `timeout`.
  const s = await createSession(brain, [placed(probeContracts.probe_order!, probeSlow, PROBE, "probeOrder", env)], [{ toolCalls: [{ name: "probe_order", input: {}, deadlineMs: 2500 }] }, { text: "done" }]);
  const b = managed().bindings.get(`${s.id}|${env.name}`);
  assert.ok(b, "no binding was made at session creation");
  assert.ok(existsSync(join(b.packageDir, "setup-record.json")), "setup had not run when session creation answered");
  assert.ok(b.running, "the host was not running when session creation answered");
  assert.is(b.starts, 1);
  const r = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go", wait: true });
  assert.is(r.status, 200, JSON.stringify(r.body));
  const all = await waitFor(brain, s.id, (x) => x.type === "tool.finished", 30_000);
  const [out] = finished(all);
  assert.is(out.status, "ok", JSON.stringify(out));
  assert.ok(out.value.setup, "the module saw no setup record when it was imported");
  assert.ok(out.value.setup.setupAt <= out.value.importedAt);
  assert.is(b.starts, 1);
});

test("a host that did not start at session creation: the first call gets why (tool_error), the next call starts it again", async () => {
  const env = { name: "no-export", runtime: "node" };
  // The executable names an export the package does not have: the host exits before serving its tools.
  const tool = placed(probeContracts.probe_order!, probe, PROBE, "noSuchExport", env);
  const { id, all } = await turn([tool], [{ name: "probe_order", input: {} }, { name: "probe_order", input: {} }]);
  const [first, second] = finished(all);
  for (const o of [first, second]) {
    assert.is(o.status, "error", JSON.stringify(o));
    assert.is(o.error.code, "tool_error");
    assert.match(o.error.message, /managed host no-export \(node\) exited .* before serving its tools/);
  }
  // One start at session creation (its failure went to the first call), one for the second call.
  assert.is(managed().bindings.get(`${id}|${env.name}`)!.starts, 2);
});

test("deleting a session stops its managed host (awaited) and removes the binding's folder; its open call ends cancelled", async () => {
  const env = { name: "deleted", runtime: "node" };
  const s = await createSession(brain, [placed(probeContracts.probe_wait!, probe, PROBE, "probeWait", env)], [{ toolCalls: [{ name: "probe_wait", input: {} }] }, { text: "done" }]);
  const b = managed().bindings.get(`${s.id}|${env.name}`)!;
  const pid = b.pid!;
  assert.ok(alive(pid));
  const hostId = b.spec.hostId;
  assert.is((await api(brain, "GET", `/v1/hosts/${hostId}`)).status, 200);
  assert.ok((await brain.internals.store.loadHosts()).some((h) => h.hostId === hostId));
  // An application's host, registered meanwhile, is never forgotten with it.
  const app = await TestHost.register(brain, [probeContracts.probe_wait!]);
  const r = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go" });
  assert.ok(r.status < 300, JSON.stringify(r.body));
  await waitFor(brain, s.id, (x) => x.type === "tool.event", 30_000);
  const del = await api(brain, "DELETE", `/v1/sessions/${s.id}`);
  assert.is(del.status, 200, JSON.stringify(del.body));
  assert.not.ok(alive(pid), "the host still runs after the session was deleted");
  assert.not.ok(existsSync(b.spec.dir), "the binding's folder is still there");
  assert.is(managed().bindings.get(`${s.id}|${env.name}`), undefined);
  assert.not.ok(brain.internals.hostTokens.has(b.spec.token), "the binding's register token is still accepted");
  // Its registration is forgotten, in the registry and in the store; the application's host stays.
  const gone = await api(brain, "GET", `/v1/hosts/${hostId}`);
  assert.is(gone.status, 404, JSON.stringify(gone.body));
  assert.not.ok((await brain.internals.store.loadHosts()).some((h) => h.hostId === hostId), "the managed host's row is still in the store");
  assert.is((await api(brain, "GET", `/v1/hosts/${app.hostId}`)).status, 200);
  app.ws.close();
  // Its id cannot register again with its old secret: not with its dropped register token, nor with the operator token.
  for (const token of [b.spec.token, brain.token]) {
    const again = await TestHost.connect(brain.url, { hostId, secret: b.spec.secret });
    const reply = await again.registerTools(token, [probeContracts.probe_wait!]);
    assert.is(reply.type === "error" && reply.error.code, "unauthorized", JSON.stringify(reply));
    assert.is((await again.closed).code, 4401);
  }
  assert.is((await api(brain, "GET", `/v1/hosts/${hostId}`)).status, 404);
  assert.not.ok((await brain.internals.store.loadHosts()).some((h) => h.hostId === hostId));
  const all = await records(brain, s.id);
  assert.is(ofType(all, "tool.finished")[0]?.data.status, "cancelled");
});

test("managed host registrations on SQLite: a deleted session's is gone after a restart, runtime close forgets the running ones, a crashed run's are forgotten at start; an application's host stays", async () => {
  const data = mkdtempSync(join(dir, "data-"));
  const tool = (name: string) => placed(probeContracts.probe_order!, probe, PROBE, "probeOrder", { name, runtime: "node" });
  let b2 = await startBrain({ dataDir: data, port: 0 });
  let deleted: string, closed: string, app: TestHost | undefined;
  try {
    await put(b2, probe);
    app = await TestHost.register(b2, [probeContracts.probe_order!]);
    const gone = await createSession(b2, [tool("gone")], []);
    deleted = managed(b2).bindings.get(`${gone.id}|gone`)!.spec.hostId;
    const kept = await createSession(b2, [tool("kept")], []);
    closed = managed(b2).bindings.get(`${kept.id}|kept`)!.spec.hostId;
    const ids = async () => (await b2.internals.store.loadHosts()).map((h) => h.hostId);
    assert.ok((await ids()).includes(deleted) && (await ids()).includes(closed));
    assert.is((await api(b2, "DELETE", `/v1/sessions/${gone.id}`)).status, 200);
    assert.not.ok((await ids()).includes(deleted));
    assert.ok((await ids()).includes(closed));
    app.ws.close();
    await b2.close();
    // What a run that crashed leaves: a managed host registration no binding will ever use again.
    const store = new SqliteStore(join(data, "journal.sqlite"));
    assert.equal((await store.loadHosts()).map((h) => h.hostId), [app.hostId]);
    store.saveHost({ hostId: "managed-00crashed00run0", salt: "s", hash: "x", contracts: [], registeredAt: 1 });
    await store.close();
    b2 = await startBrain({ dataDir: data, port: 0 });
    assert.equal((await b2.internals.store.loadHosts()).map((h) => h.hostId), [app.hostId]);
    for (const id of [deleted, closed, "managed-00crashed00run0"]) assert.is((await api(b2, "GET", `/v1/hosts/${id}`)).status, 404);
    assert.is((await api(b2, "GET", `/v1/hosts/${app.hostId}`)).status, 200);
    // The application's host registers again with its secret after the restart.
    const back = await TestHost.register(b2, [probeContracts.probe_order!], { hostId: app.hostId, secret: app.secret });
    back.ws.close();
  } finally {
    app?.ws.close();
    await b2.close();
    rmSync(data, { recursive: true, force: true });
  }
});

test("a late frame of a managed call that ended by its deadline gets call_finished, also on a later connection of its host; another binding's host gets forbidden", async () => {
  const env = { name: "late", runtime: "node" };
  const tools = [placed(probeContracts.probe_wait!, probe, PROBE, "probeWait", env)];
  const { id, all } = await turn(tools, [{ name: "probe_wait", input: {}, deadlineMs: 1500 }]);
  assert.is(finished(all)[0].status, "timeout");
  const started = ofType(all, "tool.call_started")[0]!;
  const callId = started.data.callId;
  const b = managed().bindings.get(`${id}|${env.name}`)!;
  // The host process goes; a later connection as the same host (its id, secret and register token) sends a late frame.
  const pid = b.pid!;
  process.kill(pid, "SIGKILL");
  const other = await createSession(brain, [placed(probeContracts.probe_wait!, probe, PROBE, "probeWait", { name: "late-other", runtime: "node" })], []);
  const ob = managed().bindings.get(`${other.id}|late-other`)!;
  const contracts = [probeContracts.probe_wait!];
  const host = await TestHost.register({ url: brain.url, token: b.spec.token }, contracts, { hostId: b.spec.hostId, secret: b.spec.secret });
  const stranger = await TestHost.register({ url: brain.url, token: ob.spec.token }, contracts, { hostId: ob.spec.hostId, secret: ob.spec.secret });
  try {
    for (const [h, code] of [[host, "call_finished"], [stranger, "forbidden"]] as const) {
      const ref = h.nextRef();
      h.send({ type: "emit", ref, callId, kind: "late", data: {} });
      const answer = await h.next((f) => f.type === "rejected" && f.ref === ref);
      assert.is(answer.type === "rejected" && answer.error.code, code, JSON.stringify(answer));
    }
  } finally {
    host.ws.close();
    stranger.ws.close();
  }
});

test("runtime close stops its managed hosts and unpacking in progress and awaits them: the data folder can be removed at once", async () => {
  const data = mkdtempSync(join(dir, "data-"));
  const b2 = await startBrain({ dataDir: data, port: 0 });
  let pid: number | undefined;
  try {
    await put(b2, probe);
    const tool = placed(probeContracts.probe_order!, probe, PROBE, "probeOrder", { name: "ready", runtime: "node" });
    // One binding whose host runs, one still being prepared when the runtime closes.
    const ready = await createSession(b2, [tool], []);
    pid = managed(b2).bindings.get(`${ready.id}|ready`)!.pid!;
    assert.ok(alive(pid));
    const creating = createSession(b2, [placed(probeContracts.probe_order!, probe, PROBE, "probeOrder", { name: "preparing", runtime: "node" })], []).catch(() => undefined);
    for (let i = 0; i < 2000 && ![...managed(b2).bindings.keys()].some((k) => k.endsWith("|preparing")); i++) await new Promise((r) => setTimeout(r, 5));
    await b2.close();
    await creating;
  } finally {
    await b2.close();
  }
  assert.not.ok(alive(pid!), "a managed host outlived the runtime's close");
  rmSync(data, { recursive: true });
  assert.not.ok(existsSync(data));
});

test("a binding made after runtime close (a session whose creation was in flight as it closed) starts no process", async () => {
  const data = mkdtempSync(join(dir, "data-"));
  const b2 = await startBrain({ dataDir: data, port: 0 });
  try {
    await put(b2, probe);
    const tool = placed(probeContracts.probe_order!, probe, PROBE, "probeOrder", { name: "late", runtime: "node" });
    await b2.close();
    // What a create request whose session.created committed after close() began goes on to do:
    // close() had ended the bindings it knew, so nothing would kill or await a host started now.
    await managed(b2).sessionCreated("ses_late", [tool]);
    const late = managed(b2).bindings.get("ses_late|late")!;
    assert.is(late.starts, 0);
    assert.is(late.pid, undefined);
  } finally {
    await b2.close();
    rmSync(data, { recursive: true, force: true });
  }
});

test.run();
