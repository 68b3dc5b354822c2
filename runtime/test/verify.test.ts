// The verification runner's short fixed-seed runs (issue 32): `npm run verify` for minutes or hours
// runs the same code (verify/run.ts). One node on SQLite under every fault that applies, and two
// nodes on PostgreSQL under node and host faults; each must find nothing, and must
// have done what it is for (faults with calls in flight, many acknowledged records).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { verify } from "./verify/run.ts";
import type { VerifyReport } from "./verify/run.ts";

function assertClean(r: VerifyReport): void {
  const summary = `${r.replay}\n${r.log.join("\n")}`;
  assert.equal(r.violations, [], `${r.violations.length} finding(s):\n${r.violations.slice(0, 10).join("\n")}\n${summary}\nevidence: ${r.evidenceFile}`);
  assert.ok(r.faultsWithCallsInFlight > 0, `no fault found calls in flight:\n${summary}`);
  assert.ok(r.hostAcks >= 100, `only ${r.hostAcks} host acknowledgements: the load did not run:\n${summary}`);
  assert.ok(r.messagesAcknowledged >= r.sessions, `only ${r.messagesAcknowledged} messages acknowledged:\n${summary}`);
}

test("verify: one SQLite node, SIGKILL, SIGSTOP and dropped host connections for 30 s (seed 7): every promise holds", async () => {
  const r = await verify({ seed: 7, seconds: 30, nodes: 0 });
  assertClean(r);
  assert.ok((r.faults.kill ?? 0) > 0, JSON.stringify(r.faults));
});

test("verify: two PostgreSQL nodes under SIGKILL, SIGSTOP, dropped host connections and database restarts for 30 s (seed 11): every promise holds", async () => {
  const r = await verify({ seed: 11, seconds: 30, nodes: 2 });
  assertClean(r);
  assert.ok((r.faults.kill ?? 0) > 0 && (r.faults["db-restart"] ?? 0) > 0, JSON.stringify(r.faults));
});

test.run();
