// session.events({ follow: true }) against a real runtime whose SSE streams end every 300 ms
// (maxStreamMs): the iteration opens the next stream after the last record it yielded by itself, so
// the caller sees every record once, in order, until session.deleted; abort ends it quietly; a
// revoked key ends it with `unauthorized`.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { startBrain } from "@aexhq/brain-runtime";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { Brain, ProtocolError, tool } from "@aexhq/brain";
import { records, sleep } from "./helpers/brain.mts";

const MAX_STREAM_MS = 300;
const hello = tool({ name: "hello", description: "says hi", input: z.object({}), run: async () => "hi" });
const texts = (n: number) => ({ provider: "scripted" as const, script: Array.from({ length: n }, (_, i) => ({ text: `answer ${i}` })) });

/** The session's whole journal, read over HTTP (a deleted session's too). */
async function journal(runtime: { url: string; token: string }, id: string): Promise<JournalRecord[]> {
  const res = await fetch(`${runtime.url}/v1/sessions/${id}/events?after=0`, { headers: { authorization: `Bearer ${runtime.token}` } });
  return ((await res.json()) as { records: JournalRecord[] }).records;
}

/** Counts the SSE streams the SDK opens (fetch with Accept: text/event-stream). */
function countStreams(): { count(): number; restore(): void } {
  const original = globalThis.fetch;
  let n = 0;
  globalThis.fetch = ((input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    if (new Headers(init?.headers).get("accept") === "text/event-stream") n++;
    return original(input, init);
  }) as typeof fetch;
  return { count: () => n, restore: () => void (globalThis.fetch = original) };
}

test("follow goes on across streams the runtime ends (maxStreamMs): every record once, in order, up to session.deleted", async () => {
  const runtime = await startBrain({ dataDir: ":memory:", port: 0, maxStreamMs: MAX_STREAM_MS });
  const brain = new Brain({ url: runtime.url, token: runtime.token });
  const streams = countStreams();
  try {
    const session = await brain.sessions.create({ model: texts(100), tools: [hello()] });
    const seen: JournalRecord[] = [];
    const following = (async () => {
      for await (const r of session.events({ follow: true })) seen.push(r);
    })();
    // Turns for a few stream lifetimes, with pauses, so records arrive while streams end and reopen.
    const until = Date.now() + 5 * MAX_STREAM_MS;
    let turns = 0;
    while (Date.now() < until) {
      assert.is(await session.send(`message ${turns}`), `answer ${turns}`);
      turns++;
      await sleep(20 + (turns % 7) * 10);
    }
    const id = session.id;
    await session.delete();
    await Promise.race([following, sleep(5000).then(() => assert.unreachable("the iteration did not end at session.deleted"))]);
    const all = await journal(runtime, id);
    assert.is(all.at(-1)!.type, "session.deleted");
    assert.equal(seen.map((r) => r.sequence), all.map((r) => r.sequence), "every record once, in order, none missed, none twice");
    assert.equal(seen, all);
    assert.ok(streams.count() >= 4, `the runtime ended the streams and the SDK opened new ones: ${streams.count()} streams for ${turns} turns`);
  } finally {
    streams.restore();
    await brain.close();
    await runtime.close();
  }
});

test("follow: abort ends the iteration quietly, also while it waits between streams; `after` resumes a later iteration", async () => {
  const runtime = await startBrain({ dataDir: ":memory:", port: 0, maxStreamMs: MAX_STREAM_MS });
  const brain = new Brain({ url: runtime.url, token: runtime.token });
  try {
    const session = await brain.sessions.create({ model: texts(3), tools: [hello()] });
    await session.send("one");
    const controller = new AbortController();
    const seen: JournalRecord[] = [];
    const following = (async () => {
      for await (const r of session.events({ follow: true, signal: controller.signal })) seen.push(r);
    })();
    // Idle streams end every 300 ms and are opened again; abort after a few of them.
    await sleep(3 * MAX_STREAM_MS);
    controller.abort();
    await Promise.race([following, sleep(2000).then(() => assert.unreachable("abort did not end the iteration"))]);
    const all = await records(session);
    assert.equal(seen, all);
    await session.send("two");
    const rest: JournalRecord[] = [];
    const again = new AbortController();
    for await (const r of session.events({ follow: true, after: seen.at(-1)!.sequence, signal: again.signal })) {
      rest.push(r);
      if (r.type === "turn.completed") again.abort();
    }
    assert.equal([...seen, ...rest], await records(session));
  } finally {
    await brain.close();
    await runtime.close();
  }
});

test("follow with a key that is revoked meanwhile: the iteration ends with unauthorized", async () => {
  const runtime = await startBrain({ dataDir: ":memory:", port: 0 });
  const operator = new Brain({ url: runtime.url, token: runtime.token });
  const created = await fetch(`${runtime.url}/v1/keys`, { method: "POST", headers: { authorization: `Bearer ${runtime.token}`, "content-type": "application/json" }, body: JSON.stringify({ name: "app" }) });
  const key = (await created.json()) as { id: string; key: string };
  const app = new Brain({ url: runtime.url, token: key.key });
  try {
    const session = await app.sessions.create({ model: texts(3), tools: [hello()] });
    await session.send("one");
    const seen: JournalRecord[] = [];
    const following = (async () => {
      for await (const r of session.events({ follow: true })) seen.push(r);
    })().then(() => undefined, (e: unknown) => e);
    while (!seen.some((r) => r.type === "turn.completed")) await sleep(10);
    await fetch(`${runtime.url}/v1/keys/${key.id}`, { method: "DELETE", headers: { authorization: `Bearer ${runtime.token}` } });
    const ended = await Promise.race([following, sleep(3000).then(() => "still following")]);
    assert.instance(ended, ProtocolError);
    assert.is((ended as ProtocolError).code, "unauthorized");
  } finally {
    await app.close().catch(() => {});
    await operator.close();
    await runtime.close();
  }
});

test.run();
