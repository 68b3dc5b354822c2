// Idempotency keys on several nodes (issue 26): real runtime subprocesses on a real PostgreSQL server
// the test starts. A key names one message whichever node is asked: a repeat sent to a node that
// does not own the session is answered from the owner's first request, and after the owner died the
// node that took the session over answers it from the journal (its turn ended `interrupted`).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { records, waitFor, assertJournal, ofType } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost } from "./helpers/host.ts";
import { startPgCluster } from "./helpers/pg-cluster.ts";
import type { PgCluster } from "./helpers/pg-cluster.ts";
import { freshDatabase, kill9, killAll, queryRows, startNode } from "./helpers/nodes.ts";

const TOKEN = "cluster-idem-operator-token";
const LEASE_MS = 1500;
const slow = contract("slow");
let cluster: PgCluster;

test.before(async () => {
  cluster = await startPgCluster();
});

test.after(async () => {
  await killAll();
  await cluster?.stop();
});

const as = (n: { url: string }) => ({ url: n.url, token: TOKEN }) as Brain;

async function message(node: { url: string }, id: string, body: { text: string; wait?: boolean }, key: string): Promise<{ status: number; body: any; replayed: boolean }> {
  const res = await fetch(`${node.url}/v1/sessions/${id}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json(), replayed: res.headers.get("idempotent-replayed") === "true" };
}

test("two nodes: a key sent again through the other node is replayed, and after the owner's SIGKILL the survivor answers it from the journal (`interrupted`); one message.user", async () => {
  const db = await freshDatabase(cluster.url, "idem_nodes");
  const env = { BRAIN_LEASE_MS: String(LEASE_MS), BRAIN_HOST_TIMEOUT_MS: "60000" };
  const a = await startNode(db, TOKEN, { ...env, BRAIN_NODE_ID: "node-a" });
  const b = await startNode(db, TOKEN, { ...env, BRAIN_NODE_ID: "node-b" });
  const host = await TestHost.register(as(a), [slow], { hostId: "idem-host", secret: "idem-host-secret-0001" });
  const created = await fetch(`${a.url}/v1/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ model: { provider: "scripted", script: [{ toolCalls: [{ name: "slow", input: {} }] }, { text: "never" }] }, tools: [placed(slow, host.hostId)] }),
  });
  assert.is(created.status, 201);
  const id = ((await created.json()) as { id: string }).id;

  const first = await message(a, id, { text: "go" }, "two-nodes");
  assert.equal([first.status, first.replayed, first.body.status], [202, false, "started"]);
  await host.invoke();
  // Through node B (passed on to A, the owner): the first's answer, nothing admitted.
  const viaB = await message(b, id, { text: "go" }, "two-nodes");
  assert.equal([viaB.status, viaB.replayed, viaB.body], [202, true, first.body]);
  assert.is((await message(b, id, { text: "another text" }, "two-nodes")).status, 400);

  // The owner dies with the turn running: B takes the session over after the lease and ends the
  // turn `interrupted`; the key is found in the database by the node that runs the session now.
  await kill9(a.child);
  await host.closed;
  await waitFor(as(b), id, (r) => r.type === "turn.failed", LEASE_MS * 10);
  const after = await message(b, id, { text: "go", wait: true }, "two-nodes");
  assert.equal([after.status, after.replayed, after.body.activation, after.body.sequence, after.body.status], [200, true, 1, first.body.sequence, "failed"]);
  assert.equal([after.body.error.code, after.body.error.retryable], ["interrupted", true]);
  const all = await records(as(b), id);
  assertJournal(all);
  assert.equal(ofType(all, "message.user").map((m) => m.data.idempotencyKey), ["two-nodes"]);
  assert.equal(await queryRows(db, "SELECT sequence, idempotency_key FROM journal WHERE session_id = $1 AND type = 'message.user'", [id]), [{ sequence: first.body.sequence, idempotency_key: "two-nodes" }]);
});

test.run();
