// brain.sessions.list / all (issue 27): a page with its opaque `next`, every session page by page,
// the state filter, and a key listing only its own sessions, against a real runtime.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Brain } from "../src/index.ts";
import type { SessionView } from "../src/index.ts";
import { memoryRuntime } from "./helpers/brain.mts";

const scripted = { provider: "scripted" as const, script: [{ text: "hi" }] };

test("sessions.list pages with next; sessions.all walks every page; status and the key filter apply", async () => {
  const runtime = await memoryRuntime();
  const operator = new Brain({ url: runtime.url, token: runtime.token });
  const res = await fetch(`${runtime.url}/v1/keys`, { method: "POST", headers: { authorization: `Bearer ${runtime.token}`, "content-type": "application/json" }, body: JSON.stringify({ name: "app" }) });
  const app = new Brain({ url: runtime.url, token: ((await res.json()) as { key: string }).key });
  try {
    const mine: string[] = [];
    for (let i = 0; i < 5; i++) mine.push((await app.sessions.create({ model: scripted, tools: [] })).id);
    const theirs = await operator.sessions.create({ model: scripted, tools: [] });
    await (await app.sessions.get(mine[0]!)).delete();

    const first = await app.sessions.list({ limit: 2 });
    assert.is(first.sessions.length, 2);
    assert.type(first.next, "string");
    const second = await app.sessions.list({ limit: 2, cursor: first.next });
    assert.is(second.sessions.length, 2);
    const ids = (list: SessionView[]) => list.map((s) => s.id);
    assert.equal(new Set([...ids(first.sessions), ...ids(second.sessions)]).size, 4, "pages do not overlap");

    const all: SessionView[] = [];
    for await (const s of app.sessions.all({ limit: 2 })) all.push(s);
    assert.equal(new Set(ids(all)), new Set(mine), "a key's sessions, every page, nothing of the operator's");
    assert.not.ok(ids(all).includes(theirs.id));
    const operatorAll: string[] = [];
    for await (const s of operator.sessions.all()) operatorAll.push(s.id);
    assert.equal(new Set(operatorAll), new Set([...mine, theirs.id]), "the operator sees every session");

    assert.equal(ids((await app.sessions.list({ status: "deleted" })).sessions), [mine[0]]);
    assert.is((await app.sessions.list({ status: "idle", limit: 10 })).sessions.length, 4);
    const refused = await app.sessions.list({ cursor: "not-a-cursor" }).then(() => "listed", (e: { code?: string }) => e.code);
    assert.is(refused, "invalid_request");
  } finally {
    await app.close();
    await operator.close();
    await runtime.close();
  }
});

test.run();
