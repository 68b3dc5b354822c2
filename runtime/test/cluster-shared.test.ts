// Every feature on every node (issue 28), with real node subprocesses (each with its own data folder)
// on a real PostgreSQL: a component or package uploaded through one node is admitted and run through
// another (a package as a Brain-managed host, started by whichever node runs the session), and a /ui
// login made through one node is valid on another (and a logout on either ends it).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { JournalRecord, PlacedTool, ToolContract } from "@aexhq/brain-protocol";
import { api, assertJournal, ofType, waitFor } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { startPgCluster } from "./helpers/pg-cluster.ts";
import type { PgCluster } from "./helpers/pg-cluster.ts";
import { killAll, queryRows, twoNodes as twoNodesOn } from "./helpers/nodes.ts";
import { components, inspectContract, placedComponent, upload } from "./component-helpers.mts";
import { uiCookie } from "./helpers/streams.ts";
import { contract } from "./helpers/contract.ts";
import { TestHost } from "./helpers/host.ts";
import { managedUpload, packFolder, packWorkspaces } from "./helpers/managed-package.ts";

const TOKEN = "cluster-shared-operator-token-01";
const LEASE_MS = 1500;
let cluster: PgCluster;
let databases = 0;

test.before(async () => {
  cluster = await startPgCluster();
});

test.after(async () => {
  await killAll();
  await cluster?.stop();
});

const as = (n: { url: string }) => ({ url: n.url, token: TOKEN }) as Brain;
const twoNodes = () => twoNodesOn(cluster.url, `shared_${++databases}`, TOKEN, LEASE_MS);

test("a component uploaded through one node is placed and run in a session another node creates and owns", async () => {
  const built = await components();
  const { db, a, b } = await twoNodes();
  const up = await upload(as(a), built.fixtures.counter!);
  assert.is(up.status, 201, JSON.stringify(up.body));
  // B never saw the bytes: it finds the upload (and admits it itself) when asked.
  const head = await fetch(`${b.url}/v1/components/${up.digest}`, { method: "HEAD", headers: { authorization: `Bearer ${TOKEN}` } });
  assert.is(head.status, 200);
  const kept = await queryRows(db, "SELECT count(*)::int AS parts, sum(octet_length(bytes))::int AS bytes FROM uploads WHERE kind = 'component' AND digest = $1", [up.digest]);
  assert.equal(kept, [{ parts: Math.max(1, Math.ceil(readFileSync(built.fixtures.counter!).length / (1024 * 1024))), bytes: readFileSync(built.fixtures.counter!).length }]);

  const counterOutput = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
  const tool = placedComponent(inspectContract(counterOutput, "count"), up.digest, "counter", { depth: 1 });
  const created = await api(as(b), "POST", "/v1/sessions", { model: { provider: "scripted", script: [{ toolCalls: [{ name: "count", input: { path: "x" } }] }, { text: "done" }] }, tools: [tool] });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  assert.is((await api(as(b), "POST", `/v1/sessions/${id}/messages`, { text: "go" })).status, 202);
  const all = await waitFor(as(b), id, (r) => r.type === "turn.completed", 30_000);
  assertJournal(all);
  assert.equal(ofType(all, "tool.result").map((r) => r.data.outcome), [{ status: "ok", value: { n: 1 } }]);
});

test("Environment control from a host connected to one node, in a session another node owns: list and a nested call are relayed and journaled by the owner", async () => {
  const built = await components();
  const { a, b } = await twoNodes();
  const up = await upload(as(a), built.fixtures.counter!);
  assert.is(up.status, 201, JSON.stringify(up.body));
  const caller = contract("caller");
  const host = await TestHost.register(as(a), [caller], { hostId: "control-host", secret: "control-host-secret-01" });
  try {
    const counterOutput = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };
    const tools = [
      { contract: caller, options: {}, placement: { kind: "host", hostId: host.hostId, environments: { list: true, call: ["tools"] } } },
      placedComponent(inspectContract(counterOutput, "count"), up.digest, "tools", { depth: 1 }),
    ];
    // Created through B: B owns it, the host is connected to A.
    const created = await api(as(b), "POST", "/v1/sessions", { model: { provider: "scripted", script: [{ toolCalls: [{ name: "caller", input: {} }] }, { text: "done" }] }, tools });
    assert.is(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as string;
    assert.is((await api(as(b), "POST", `/v1/sessions/${id}/messages`, { text: "go" })).status, 202);
    const invoke = await host.invoke(10_000);
    const ask = async (request: unknown) => {
      const ref = host.nextRef();
      host.send({ type: "environment_request", ref, callId: invoke.callId, request } as never);
      return (await host.next((f) => f.type === "environment_result" && (f as { ref: number }).ref === ref, 15_000)) as { result?: { bindings?: Array<{ name: string }>; outcome?: unknown }; error?: { code: string; message: string } };
    };
    const listed = await ask({ operation: "list" });
    assert.equal(listed.result?.bindings?.map((x) => x.name), ["tools"], JSON.stringify(listed));
    const called = await ask({ operation: "call", name: "tools", tool: "count", input: { path: "x" } });
    assert.equal(called.result?.outcome, { status: "ok", value: { n: 1 } }, JSON.stringify(called));
    assert.is((await host.request({ type: "finish", callId: invoke.callId })).type, "committed");
    const all = await waitFor(as(b), id, (r) => r.type === "turn.completed", 15_000);
    assertJournal(all);
    assert.equal(ofType(all, "environment.request").map((r) => r.data.request.operation), ["list", "call"]);
    assert.is(ofType(all, "environment.response").length, 2);
    assert.equal(ofType(all, "tool.call_started").map((r) => [r.data.tool, r.data.origin ?? null]), [["caller", null], ["count", invoke.callId]]);
  } finally {
    await host.close();
  }
});

test("a package uploaded through one node is found admitted through another", async () => {
  const { a, b } = await twoNodes();
  const dir = mkdtempSync(join(tmpdir(), "brain-shared-package-"));
  mkdirSync(join(dir, "package"));
  writeFileSync(join(dir, "package", "package.json"), JSON.stringify({ name: "@example/shared-tools", version: "1.2.3", type: "module" }));
  execFileSync("tar", ["-czf", join(dir, "p.tgz"), "-C", dir, "package"]);
  const bytes = readFileSync(join(dir, "p.tgz"));
  const digest = createHash("sha256").update(bytes).digest("hex");
  const put = await fetch(`${a.url}/v1/packages/${digest}`, { method: "PUT", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/gzip" }, body: bytes });
  assert.is(put.status, 201, await put.text());
  const got = await api(as(b), "GET", `/v1/packages/${digest}`);
  assert.is(got.status, 200, JSON.stringify(got.body));
  assert.equal([got.body.status, got.body.name, got.body.version], ["admitted", "@example/shared-tools", "1.2.3"]);
  // A digest never uploaded through any node is still unknown.
  assert.is((await api(as(b), "GET", `/v1/packages/${"e".repeat(64)}`)).status, 404);
});

test("a package uploaded through one node runs as a Brain-managed host in a session another node creates and owns; after that node stops, the node taking the session over starts the host itself", async () => {
  const work = mkdtempSync(join(realpathSync(tmpdir()), "brain-shared-managed-"));
  const packs = packWorkspaces(["generated", "sdk-core", "sdk-node"], join(work, "packs"));
  const sdk = ["@aexhq/brain-protocol", "@aexhq/brain-core", "@aexhq/brain"].map((n) => packs[n]!);
  const fixture = fileURLToPath(new URL("../test-fixtures/managed-probe-tools/", import.meta.url));
  const probe = managedUpload(packFolder(fixture, join(work, "packs")), sdk, join(work, "uploads"));
  const mod = (await import(new URL("index.js", `file://${fixture}`).href)) as { probeOrder: { tool: { contract(): Promise<ToolContract> } } };
  const contract = await mod.probeOrder.tool.contract();
  const { db, a, b } = await twoNodes();
  const put = await fetch(`${a.url}/v1/packages/${probe.digest}`, { method: "PUT", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/gzip" }, body: probe.bytes });
  assert.is(put.status, 201, await put.text());
  const tool = { contract, options: {}, placement: { kind: "managed", env: "probe", runtime: "node", digest: probe.digest, executable: { package: "@aexhq/managed-probe-tools", version: "0.1.0", module: ".", export: "probeOrder" } } } as PlacedTool;
  const call = { toolCalls: [{ name: "probe_order", input: {} }] };
  // Created through B, which never saw the bytes: B prepares the binding from the database and owns the session.
  const created = await api(as(b), "POST", "/v1/sessions", { model: { provider: "scripted", script: [call, { text: "one" }, call, { text: "two" }] }, tools: [tool] });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  const first = await api(as(b), "POST", `/v1/sessions/${id}/messages`, { text: "go", wait: true });
  assert.is(first.status, 200, JSON.stringify(first.body));
  assert.is(first.body.status, "completed", JSON.stringify(first.body));
  // A run that returns without ctx.finish keeps its call open after `tool.returned`: wait until each call returned or ended.
  const settled = (rs: JournalRecord[]) => ofType(rs, "tool.call_started").every((c) => rs.some((x) => (x.type === "tool.returned" || x.type === "tool.finished") && x.data.callId === c.data.callId));
  const results = async (via: { url: string }) => ofType(await waitFor(as(via), id, (_r, rs) => settled(rs), 30_000), "tool.result").map((r) => r.data.outcome as { status: string; value: { pid: number; runtime: string } });
  const [ranOnB] = await results(b);
  assert.equal([ranOnB?.status, ranOnB?.value.runtime], ["ok", "node"], JSON.stringify(ranOnB));
  assert.equal(await queryRows(db, "SELECT owner FROM leases WHERE session_id = $1", [id]), [{ owner: "node-b" }]);

  // B stops cleanly (its lease ends at once, its managed hosts stop with it); A takes the session
  // over at the next message and starts the binding's host itself, from the package in the database.
  const exited = new Promise((r) => b.child.once("exit", r));
  b.child.kill("SIGTERM");
  await exited;
  const second = await api(as(a), "POST", `/v1/sessions/${id}/messages`, { text: "again", wait: true });
  assert.is(second.status, 200, JSON.stringify(second.body));
  assert.is(second.body.status, "completed", JSON.stringify(second.body));
  const all = await results(a);
  assert.is(all.length, 2, JSON.stringify(all));
  assert.equal([all[1]!.status, all[1]!.value.runtime], ["ok", "node"], JSON.stringify(all[1]));
  assert.is.not(all[1]!.value.pid, ranOnB!.value.pid, "a host process of A's, not B's");
  assert.equal(await queryRows(db, "SELECT owner FROM leases WHERE session_id = $1", [id]), [{ owner: "node-a" }]);
  assertJournal(await waitFor(as(a), id, (r) => r.type === "turn.completed" && r.data.activation === 2, 5_000));
});

test("a /ui login made through one node is valid on another; a logout through either ends it on both", async () => {
  const { db, a, b } = await twoNodes();
  const key = await api(as(a), "POST", "/v1/keys", { name: "page-user" });
  assert.is(key.status, 201);
  const cookie = await uiCookie(a, key.body.key);
  // Neither the cookie's id nor the key is stored in the clear.
  const rows = await queryRows(db, "SELECT id_hash, sealed FROM ui_logins");
  assert.is(rows.length, 1);
  const id = cookie.slice("brain_ui=".length);
  assert.not.ok(JSON.stringify(rows).includes(id) || JSON.stringify(rows).includes(key.body.key), "the database holds the id or the key in the clear");

  const page = await fetch(`${b.url}/ui`, { headers: { cookie } });
  assert.ok((await page.text()).includes('name="brain-csrf"'), "B serves the page, not the login form");
  const listed = await fetch(`${b.url}/v1/sessions`, { headers: { cookie } });
  assert.is(listed.status, 200);
  // Signed out through B: A no longer accepts the cookie (within the nodes' one-second cache).
  const out = await fetch(`${b.url}/ui/logout`, { method: "POST", redirect: "manual", headers: { cookie } });
  assert.is(out.status, 303);
  await new Promise((r) => setTimeout(r, 1_100));
  assert.is((await fetch(`${a.url}/v1/sessions`, { headers: { cookie } })).status, 401);
  assert.not.ok((await (await fetch(`${a.url}/ui`, { headers: { cookie } })).text()).includes('name="brain-csrf"'));
  assert.equal(await queryRows(db, "SELECT count(*)::int AS n FROM ui_logins"), [{ n: 0 }]);
});

test.run();
