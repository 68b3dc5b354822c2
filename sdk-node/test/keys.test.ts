// The SDK takes an API key exactly as it takes the operator token (issue 16): an application with
// its own key creates sessions, hosts its tools under that key and runs turns; another key cannot
// see its sessions.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { Brain, tool } from "../src/index.ts";
import { memoryRuntime, callThenAnswer, records, finished } from "./helpers/brain.mts";

const echo = tool({
  name: "echo",
  description: "Echo the text.",
  input: z.object({ text: z.string() }),
  output: z.object({ text: z.string() }),
  run: async ({ text }, ctx) => ctx.finish({ text }),
});

async function newKey(runtime: { url: string; token: string }, name: string): Promise<string> {
  const res = await fetch(`${runtime.url}/v1/keys`, { method: "POST", headers: { authorization: `Bearer ${runtime.token}`, "content-type": "application/json" }, body: JSON.stringify({ name }) });
  assert.is(res.status, 201);
  return ((await res.json()) as { key: string }).key;
}

test("an application with its own API key runs a session with its tools; another key gets not_found for it", async () => {
  const runtime = await memoryRuntime();
  const app = new Brain({ url: runtime.url, token: await newKey(runtime, "app") });
  const other = new Brain({ url: runtime.url, token: await newKey(runtime, "other") });
  try {
    const session = await app.sessions.create({ model: callThenAnswer([{ name: "echo", input: { text: "hi" } }], "echoed"), tools: [echo({})] });
    assert.is(await session.send("go"), "echoed");
    assert.equal(finished(await records(session)).map((f) => f.data.status), ["ok"]);
    const seen = await other.sessions.get(session.id).then(
      () => "visible",
      (e: { code?: string }) => e.code,
    );
    assert.is(seen, "not_found");
  } finally {
    await app.close();
    await other.close();
    await runtime.close();
  }
});

test.run();
