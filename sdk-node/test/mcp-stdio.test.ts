// serveMcpStdio: the MCP SDK's own Client spawns a script over StdioClientTransport; the script serves
// its declared tools and relays to a real runtime's /v1/mcp, so each call is a journaled Brain call.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { startBrain } from "@aexhq/brain-runtime";
import { Brain, tool } from "@aexhq/brain";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { z } from "zod";
import { serveMcpStdio } from "@aexhq/brain/mcp";

const SCRIPT = fileURLToPath(new URL("./fixtures/mcp-stdio-server.mts", import.meta.url));

async function journalOf(url: string, key: string): Promise<JournalRecord[]> {
  const list = (await (await fetch(`${url}/v1/sessions`, { headers: { authorization: `Bearer ${key}` } })).json()) as { sessions: Array<{ id: string }> };
  assert.is(list.sessions.length, 1, "one Brain session for the MCP session");
  const res = await fetch(`${url}/v1/sessions/${list.sessions[0]!.id}/events`, { headers: { authorization: `Bearer ${key}` } });
  return ((await res.json()) as { records: JournalRecord[] }).records;
}

test("an MCP client over stdio lists only the script's tools, calls them with progress and cancellation, and each call is journaled", async () => {
  const runtime = await startBrain({ dataDir: ":memory:", port: 0 });
  const created = (await (await fetch(`${runtime.url}/v1/keys`, { method: "POST", headers: { authorization: `Bearer ${runtime.token}`, "content-type": "application/json" }, body: JSON.stringify({ name: "stdio" }) })).json()) as { key: string };
  // Another host of the same key serves a tool the stdio server does not declare: it is not listed there.
  const other = new Brain({ url: runtime.url, token: created.key });
  await other.serve([tool({ name: "other", description: "not ours", input: z.object({}), run: async (_i, ctx) => ctx.finish(1) })()]);
  const client = new Client({ name: "stdio-test", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--conditions=brain-source", "--import", "tsx", SCRIPT],
    env: { ...(process.env as Record<string, string>), BRAIN_URL: runtime.url, BRAIN_TOKEN: created.key },
    stderr: "inherit",
  });
  try {
    await client.connect(transport);
    assert.equal((await client.listTools()).tools.map((t) => t.name).sort(), ["greet", "wait"]);
    const progress: number[] = [];
    const r = await client.request({ method: "tools/call", params: { name: "greet", arguments: { name: "Ada" } } }, CallToolResultSchema, { onprogress: (p) => void progress.push(p.progress) });
    assert.equal(r.structuredContent, { greeting: "hello Ada" });
    assert.equal(progress, [1, 2]);
    try {
      await client.callTool({ name: "other", arguments: {} });
      assert.unreachable("a tool the script does not declare is not callable");
    } catch (e) {
      assert.match(String(e), /-32602/);
    }
    const stop = new AbortController();
    const waiting = client.callTool({ name: "wait", arguments: {} }, undefined, { signal: stop.signal });
    for (let i = 0; i < 200; i++) {
      if ((await journalOf(runtime.url, created.key)).some((x) => x.type === "tool.event" && x.data.kind === "started")) break;
      await new Promise((res) => setTimeout(res, 20));
    }
    stop.abort("enough");
    await waiting.then(() => assert.unreachable("aborted"), () => undefined);
    let all: JournalRecord[] = [];
    for (let i = 0; i < 200; i++) {
      all = await journalOf(runtime.url, created.key);
      if (all.filter((x) => x.type === "tool.finished").length === 2) break;
      await new Promise((res) => setTimeout(res, 20));
    }
    const finished = all.filter((x): x is Extract<JournalRecord, { type: "tool.finished" }> => x.type === "tool.finished");
    assert.equal(finished.map((f) => f.data.status), ["ok", "cancelled"]);
    assert.equal(all.filter((x) => x.type === "tool.call_started").map((x) => (x.data as { tool: string }).tool), ["greet", "wait"]);
  } finally {
    await client.close();
    await other.close();
    await runtime.close();
  }
});

test("a tool that takes factory options is refused at start, before anything connects (an MCP session cannot give options)", async () => {
  const prefixed = tool({ name: "prefixed", description: "needs options", input: z.object({}), options: z.object({ prefix: z.string() }), run: async (_i, ctx) => ctx.finish(ctx.options.prefix) });
  try {
    await serveMcpStdio({ tools: [prefixed({ prefix: "x" })], url: "http://127.0.0.1:9", token: "unused" });
    assert.unreachable("refused");
  } catch (e) {
    assert.match(String(e), /prefixed take factory options/);
  }
});

test.run();
