// PostgreSQL down or restarting (issue 28): what a store operation and a client see. A read or a
// write while the server is unreachable fails `unavailable` (503, retryable) with the driver's
// error as its cause, never the driver's error as `internal` (500); once the server is back, the
// same store and node serve again, and nothing acknowledged before the outage is lost.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../src/errors.ts";
import { PostgresStore } from "../src/journal/postgres.ts";
import { freshDatabase, killAll, startNode } from "./helpers/nodes.ts";
import { deferred } from "./helpers/provider-server.ts";
import { startPgCluster } from "./helpers/pg-cluster.ts";
import type { PgCluster } from "./helpers/pg-cluster.ts";

let cluster: PgCluster;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rec = (sessionId: string, sequence: number, type: JournalRecord["type"], data: unknown): JournalRecord => ({ sessionId, sequence, at: Date.now(), type, data }) as JournalRecord;

test.before(async () => {
  cluster = await startPgCluster();
});

test.after(async () => {
  await killAll();
  await cluster.stop();
});

async function refusal(p: Promise<unknown>): Promise<BrainRuntimeError> {
  const e = await p.then(() => undefined, (e: unknown) => e);
  assert.instance(e, BrainRuntimeError, `expected a BrainRuntimeError, got ${String(e)}`);
  return e as BrainRuntimeError;
}

test("store: a read and a write while PostgreSQL is down fail unavailable (retryable, with the driver's cause); both work again once it is back", async () => {
  const url = await freshDatabase(cluster.url, "outage_store");
  const store = await PostgresStore.open(url);
  try {
    await store.append(rec("ses_outage", 1, "session.created", { model: { provider: "scripted", script: [] }, tools: [] }));
    // The refusals are asked for once the server is down (not at a fixed time after asking it to stop),
    // within the 2.5 s it stays down.
    const down = deferred();
    const restarted = cluster.restart("fast", 2500, () => down.resolve());
    try {
      await down.promise;
      for (const e of [await refusal(store.head("ses_other")), await refusal(store.append(rec("ses_outage", 2, "message.user", { text: "during", activation: 1 })))]) {
        assert.is(e.code, "unavailable", e.message);
        assert.is(e.retryable, true);
        assert.ok(e.cause !== undefined, "the driver's error is kept as the cause");
      }
    } finally {
      await restarted;
    }
    await store.append(rec("ses_outage", 2, "message.user", { text: "after", activation: 1 }));
    const all = await store.read("ses_outage");
    assert.equal(all.map((r) => [r.sequence, r.type]), [[1, "session.created"], [2, "message.user"]]);
  } finally {
    await store.close();
  }
});

test("node: messages sent while PostgreSQL is down for 5 s are answered 503 unavailable at once, not 500 and not after it is back; the session takes messages again afterwards", async () => {
  const db = await freshDatabase(cluster.url, "outage_node");
  const token = "outage-operator-token-0001";
  const node = await startNode(db, token, { BRAIN_LEASE_MS: "1000" });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(node.url + path, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };
  const created = await call("POST", "/v1/sessions", { model: { provider: "scripted", script: [{ text: "one" }, { text: "two" }, { text: "three" }] }, tools: [] });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  assert.is((await call("POST", `/v1/sessions/${id}/messages`, { text: "before", wait: true })).status, 200);
  // Down for 5 s, five times the node's lease: requests all through the outage are answered 503
  // while the database is still down (none waits for it to come back), the first ones by a node
  // that still holds its lease, the later ones by one that let its sessions go.
  let back = false;
  // Timed from the moment the server is down (its stop can take a second on a loaded machine).
  const down = deferred();
  const restarted = cluster.restart("immediate", 5000, () => down.resolve()).then(() => (back = true));
  try {
    await down.promise;
    for (const at of [800, 2500, 4000]) {
      await sleep(at === 800 ? 800 : at === 2500 ? 1700 : 1500);
      const during = await call("POST", `/v1/sessions/${id}/messages`, { text: `during ${at}` });
      assert.is(during.status, 503, JSON.stringify(during.body));
      assert.is(during.body.error.code, "unavailable");
      assert.is(during.body.error.retryable, true);
      assert.not.ok(back, `the request sent ${at} ms into the outage was answered only once PostgreSQL was back`);
    }
  } finally {
    await restarted;
  }
  let after: { status: number; body: any } | undefined;
  for (let i = 0; i < 40; i++) {
    after = await call("POST", `/v1/sessions/${id}/messages`, { text: "after", wait: true });
    if (after.status !== 503) break;
    await sleep(250);
  }
  assert.is(after!.status, 200, JSON.stringify(after!.body));
  const events = await call("GET", `/v1/sessions/${id}/events`);
  const texts = (events.body.records as JournalRecord[]).filter((r) => r.type === "message.user").map((r) => (r.data as { text: string }).text);
  assert.equal(texts, ["before", "after"], "the acknowledged message is there; the refused one is not");
});

test.run();
