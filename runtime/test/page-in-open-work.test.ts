// A session paged in with work open in its journal and nothing in memory running it (this node
// stopped the run: a failed write, a lost lease) is recovered, as after a restart: its open call
// ends `unknown`, its turn `interrupted`, and the next message runs a turn of its own. Found by the
// verification runner on PostgreSQL (verify/run.ts): run by an idle loop from its head, the session
// started the next turn over the one left open.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { memoryBrain, api, createSession, records, waitFor, assertJournal } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost } from "./helpers/host.ts";
import type { JournalRecord } from "@aexhq/brain-protocol";

const echo = contract("echo");
const activationOf = (r: JournalRecord) => (r.data as { activation?: number }).activation;

test("a session whose run was stopped with a turn and a call open is recovered when it pages in, not run from its head", async () => {
  const brain = await memoryBrain();
  const host = await TestHost.register(brain, [echo], { hostId: "page-in-host", secret: "page-in-secret-0001" });
  try {
    const session = await createSession(brain, [placed(echo, host.hostId)], [{ toolCalls: [{ name: "echo", input: { n: 1 } }] }, { text: "second turn" }]);
    assert.is((await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: "first" })).status, 202);
    const call = await host.invoke();
    // This node stops running the session with the turn and the call open (what a lost lease or a
    // failed write does); the host's late answer is refused, never journaled.
    brain.internals.sessions.evict(session.id);
    const late = await host.request({ type: "finish", callId: call.callId, outcome: { status: "ok", value: { n: 1 } } });
    assert.is(late.type, "rejected", JSON.stringify(late));

    const sent = await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: "again", wait: true });
    assert.is(sent.status, 200, JSON.stringify(sent.body));
    const all = await waitFor(brain, session.id, (r) => r.type === "turn.completed");
    assertJournal(all);
    const ends = all.filter((r) => r.type === "turn.completed" || r.type === "turn.failed");
    assert.equal(ends.map((r) => `${r.type} ${activationOf(r)}`), ["turn.failed 1", "turn.completed 2"]);
    assert.is((ends[0]!.data as { error: { code: string } }).error.code, "interrupted");
    const finished = all.filter((r) => r.type === "tool.finished");
    assert.equal(finished.map((r) => (r.data as { status: string }).status), ["unknown"]);
    // The interrupted turn ended before the next one started.
    const secondStart = all.find((r) => r.type === "turn.started" && activationOf(r) === 2)!;
    assert.ok(ends[0]!.sequence < secondStart.sequence, `turn 1 ended at ${ends[0]!.sequence}, turn 2 started at ${secondStart.sequence}`);
    assertJournal(await records(brain, session.id));
  } finally {
    await host.close();
    await brain.close();
  }
});

test.run();
