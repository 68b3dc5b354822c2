// Tenant limits across nodes (issue 32), with two real node subprocesses on a real PostgreSQL
// server: limits set through one node are seen by the other (at its next credentials refresh), a
// key's sessions open are counted in the database (all nodes' together), and a session's journal
// bytes are counted from the database by the node that takes the session over.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { api } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { startPgCluster } from "./helpers/pg-cluster.ts";
import type { PgCluster } from "./helpers/pg-cluster.ts";
import { kill9, killAll, twoNodes } from "./helpers/nodes.ts";
import type { NodeProcess } from "./helpers/nodes.ts";

const TOKEN = "cluster-limits-operator-token-0001";
const LEASE_MS = 1500;

let cluster: PgCluster;
let a: NodeProcess;
let b: NodeProcess;

test.before(async () => {
  cluster = await startPgCluster();
  ({ a, b } = await twoNodes(cluster.url, "limits", TOKEN, LEASE_MS));
});

test.after(async () => {
  await killAll();
  await cluster?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const as = (node: { url: string }, token: string) => ({ url: node.url, token });
const operator = (node: NodeProcess) => node as unknown as Brain;
const scripted = (script: unknown[]) => ({ model: { provider: "scripted", script }, tools: [] });

/** Polls `node`'s key list until the key shows `limits` (its next credentials refresh). */
async function limitsSeen(node: NodeProcess, keyId: string, limits: unknown, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const key = (await api(operator(node), "GET", "/v1/keys")).body.keys.find((k: { id: string }) => k.id === keyId);
    if (JSON.stringify(key?.limits) === JSON.stringify(limits)) return;
    if (Date.now() > until) throw new Error(`node never saw the limits; it lists ${JSON.stringify(key)}`);
    await sleep(50);
  }
}

test("limits set through node A hold on node B; a key's sessions open are counted over both nodes", async () => {
  const key = (await api(operator(a), "POST", "/v1/keys", { name: "tenant" })).body;
  const other = (await api(operator(a), "POST", "/v1/keys", { name: "other" })).body;
  assert.is((await api(operator(a), "PATCH", `/v1/keys/${key.id}`, { limits: { sessions: 2 } })).status, 200);
  await limitsSeen(b, key.id, { sessions: 2 });
  assert.is((await api(as(a, key.key), "POST", "/v1/sessions", scripted([]))).status, 201);
  assert.is((await api(as(b, key.key), "POST", "/v1/sessions", scripted([]))).status, 201);
  for (const node of [a, b]) {
    const refused = await fetch(`${node.url}/v1/sessions`, { method: "POST", headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" }, body: JSON.stringify(scripted([])) });
    assert.is(refused.status, 429, "the third session is refused on either node");
    assert.is(refused.headers.get("retry-after"), "1");
    const body = (await refused.json()) as { error: { code: string; details: unknown } };
    assert.is(body.error.code, "limit_exceeded");
    assert.equal(body.error.details, { limit: "sessions", max: 2, current: 2 });
  }
  assert.is((await api(as(b, other.key), "POST", "/v1/sessions", scripted([]))).status, 201, "another key is unaffected");
});

test("a session's journal bytes are counted from the database: the node taking it over refuses its next message", async () => {
  const key = (await api(operator(a), "POST", "/v1/keys", { name: "bytes" })).body;
  assert.is((await api(operator(a), "PATCH", `/v1/keys/${key.id}`, { limits: { journalBytes: 3000 } })).status, 200);
  await limitsSeen(b, key.id, { journalBytes: 3000 });
  const id = (await api(as(a, key.key), "POST", "/v1/sessions", scripted([{ text: "z".repeat(2000) }, { text: "never" }]))).body.id;
  assert.is((await api(as(a, key.key), "POST", `/v1/sessions/${id}/messages`, { text: "go", wait: true })).status, 200);
  // Node A (the session's owner) dies; B takes the session over when it is next asked for it and
  // knows its bytes only from the database.
  await kill9(a.child);
  const until = Date.now() + LEASE_MS * 6;
  let refused: { status: number; body: any; retryAfter: string | null } | undefined;
  while (refused === undefined || refused.status === 503) {
    const res = await fetch(`${b.url}/v1/sessions/${id}/messages`, { method: "POST", headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" }, body: JSON.stringify({ text: "again" }) });
    refused = { status: res.status, body: await res.json(), retryAfter: res.headers.get("retry-after") };
    if (Date.now() > until) break;
    if (refused.status === 503) await sleep(100);
  }
  assert.is(refused!.status, 429, JSON.stringify(refused!.body));
  assert.is(refused!.retryAfter, "1");
  assert.is(refused!.body.error.details.limit, "journalBytes");
  assert.ok(refused!.body.error.details.current > 4000, `counted ${refused!.body.error.details.current} bytes: the script and the reply node A wrote`);
});

test.run();
