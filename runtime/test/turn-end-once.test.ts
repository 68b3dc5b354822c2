// A turn ends once: a cancel that arrives after the turn's end was admitted (turn.completed written
// but not committed yet) must not admit a second end. Found by the verification runner (verify/run.ts):
// `turn.completed` at 183 and `turn.failed` `cancelled` at 184 for the same activation.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { memoryBrain, api, createSession, records, waitFor, assertJournal } from "./helpers/brain.ts";

test("a cancel in the window between a turn's end being admitted and committed admits nothing", async () => {
  const brain = await memoryBrain();
  try {
    const rounds = 20;
    const session = await createSession(brain, [], Array.from({ length: rounds }, (_, i) => ({ text: `answer ${i}` })));
    const state = await brain.internals.sessions.state(session.id);
    const answers: unknown[] = [];
    // When the model's answer commits, the loop admits turn.completed in the microtasks that follow;
    // its commit waits for the next group commit (setImmediate). The cancel queued here runs first
    // (on PostgreSQL the window is a database round trip, wide enough for an HTTP cancel).
    state.onCommit((r) => {
      if (r.type === "model.usage") setImmediate(() => void brain.internals.sessions.cancel(session.id).then((a) => answers.push(a)));
    });
    for (let i = 0; i < rounds; i++) {
      const sent = await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: `go ${i}`, wait: true });
      assert.is(sent.status, 200, JSON.stringify(sent.body));
      await waitFor(brain, session.id, (r) => r.type === "turn.completed" && (r.data as { activation: number }).activation === i + 1);
    }
    // Every cancel answered (each is in flight beside its turn's end; a loaded machine may answer the
    // last after its turn.completed was read), then a moment for a second end that must not come.
    for (const until = Date.now() + 5000; answers.length < rounds && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 50));
    const all = await records(brain, session.id);
    assertJournal(all);
    const ends = all.filter((r) => r.type === "turn.completed" || r.type === "turn.failed");
    assert.is(ends.length, rounds, `every activation ends once: ${ends.map((r) => `${r.sequence}:${r.type}(${(r.data as { activation: number }).activation})`).join(" ")}`);
    assert.is(answers.length, rounds, "every cancel was answered");
  } finally {
    await brain.close();
  }
});

test.run();
