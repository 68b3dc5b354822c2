// Brain's MCP endpoint (/v1/mcp) against the MCP SDK's own Client over Streamable HTTP, with a real
// runtime and a real host serving tool() declarations: every tools/call is a journaled call of the
// MCP session's Brain session, and its outcome maps back as docs/mcp.md says.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Brain } from "@aexhq/brain";
import { api, memoryBrain, ofType, records } from "./helpers/brain.ts";
import type { Brain as Runtime } from "./helpers/brain.ts";
import { aborted, add, echo, fail, hang, sleep, steps, upper, withOptions } from "./mcp/fixture-tools.ts";

async function newKey(runtime: Runtime, name: string): Promise<string> {
  const r = await api(runtime, "POST", "/v1/keys", { name });
  if (r.status !== 201) throw new Error(`key: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.key as string;
}

async function connect(runtime: Runtime, token: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: "mcp-server-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${runtime.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  return { client, transport };
}

/** A runtime, an API key, and a host connected with that key serving the fixture tools. */
async function setup(opts: Parameters<typeof memoryBrain>[0] = {}) {
  const runtime = await memoryBrain(opts);
  const key = await newKey(runtime, "mcp");
  const host = new Brain({ url: runtime.url, token: key });
  await host.serve([echo(), add(), fail(), steps(), hang(), upper(), withOptions({ prefix: "x" })]);
  return { runtime, key, host, close: async () => {
    await host.close();
    await runtime.close();
  } };
}

test("initialize and tools/list: the key's connected host tools, with their schemas; a tool taking options is not served", async () => {
  const t = await setup();
  try {
    const { client, transport } = await connect(t.runtime, t.key);
    assert.is(client.getServerVersion()?.name, "brain");
    assert.ok(client.getServerCapabilities()?.tools, "tools capability");
    assert.ok(transport.sessionId?.startsWith("ses_"), `the MCP session id is its Brain session's: ${transport.sessionId}`);
    const { tools } = await client.listTools();
    assert.equal(tools.map((x) => x.name).sort(), ["add", "echo", "fail", "hang", "steps", "upper"]);
    const e = tools.find((x) => x.name === "echo")!;
    assert.is(e.description, "Echoes its text back, with its length.");
    assert.equal((e.inputSchema as { required?: string[] }).required, ["text"]);
    assert.is(e.outputSchema?.type, "object");
    // The Brain session is the key's: it reads it over the ordinary API.
    const view = await api(t.runtime, "GET", `/v1/sessions/${transport.sessionId}`, undefined, { token: t.key });
    assert.is(view.status, 200);
    assert.equal(view.body.tools.map((x: { contract: { name: string } }) => x.contract.name).sort(), ["add", "echo", "fail", "hang", "steps", "upper"]);
    await client.close();
  } finally {
    await t.close();
  }
});

test("tools/call ok: structuredContent and text content, journaled as a call of the MCP session's Brain session", async () => {
  const t = await setup();
  try {
    const { client, transport } = await connect(t.runtime, t.key);
    const r = await client.callTool({ name: "echo", arguments: { text: "hello" } });
    assert.equal(r.structuredContent, { text: "hello", length: 5 });
    assert.equal(r.content, [{ type: "text", text: JSON.stringify({ text: "hello", length: 5 }) }]);
    assert.not.ok(r.isError);
    const meta = r._meta as Record<string, unknown>;
    assert.is(meta["aexhq.brain/status"], "ok");
    const sum = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
    assert.equal(sum.content, [{ type: "text", text: "2 + 3 = 5" }], "the tool's content is the MCP text content");
    const shout = await client.callTool({ name: "upper", arguments: { text: "hi" } });
    assert.equal(shout.content, [{ type: "text", text: "HI" }], "a string value without content is the text as it is");
    const all = await records(t.runtime, transport.sessionId!);
    const started = ofType(all, "tool.call_started");
    assert.equal(started.map((s) => s.data.tool), ["echo", "add", "upper"]);
    assert.is(started[0]!.data.callId, meta["aexhq.brain/callId"]);
    assert.equal(started[0]!.data.input, { text: "hello" });
    assert.equal(ofType(all, "message.user").map((m) => m.data.activation), [1, 2, 3], "each call is an activation of its own");
    assert.equal(ofType(all, "turn.started"), [], "no model turn");
    assert.equal(ofType(all, "tool.finished").map((f) => f.data.status), ["ok", "ok", "ok"]);
    await client.close();
  } finally {
    await t.close();
  }
});

test("tools/call error: isError with the error's code in _meta; an unknown tool or bad arguments are JSON-RPC / tool errors, never internal", async () => {
  const t = await setup();
  try {
    const { client } = await connect(t.runtime, t.key);
    const r = await client.callTool({ name: "fail", arguments: {} });
    assert.is(r.isError, true);
    const meta = r._meta as Record<string, unknown>;
    assert.is(meta["aexhq.brain/status"], "error");
    assert.equal(meta["aexhq.brain/error"], { code: "not_found", message: "no such record", details: { id: 7 } });
    assert.equal(r.content, [{ type: "text", text: "not_found: no such record" }]);
    const bad = await client.callTool({ name: "echo", arguments: { text: 5 } });
    assert.is(bad.isError, true);
    assert.is(((bad._meta as Record<string, unknown>)["aexhq.brain/error"] as { code: string }).code, "invalid_input");
    try {
      await client.callTool({ name: "nope", arguments: {} });
      assert.unreachable("an unknown tool is a JSON-RPC error");
    } catch (e) {
      assert.match(String(e), /-32602.*Tool nope not found/);
    }
    try {
      await client.callTool({ name: "echo", arguments: { text: "x" }, _meta: { "aexhq.brain/deadlineMs": -1 } });
      assert.unreachable("a bad deadline is a JSON-RPC error");
    } catch (e) {
      assert.match(String(e), /-32602.*deadlineMs/);
    }
    await client.close();
  } finally {
    await t.close();
  }
});

test("progress: each tool.event is a notifications/progress (increasing) and a log message, all before the result", async () => {
  const t = await setup();
  try {
    const { client } = await connect(t.runtime, t.key);
    const logs: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
    const progress: Array<{ progress: number; total?: number; message?: string }> = [];
    const r = await client.request({ method: "tools/call", params: { name: "steps", arguments: { n: 3 } } }, CallToolResultSchema, { onprogress: (p) => void progress.push(p) });
    assert.equal(r.structuredContent, undefined, "steps advertises no output schema");
    assert.equal(JSON.parse((r.content[0] as { text: string }).text), { done: 3 });
    assert.equal(progress, [
      { progress: 10, total: 30, message: "step 1" },
      { progress: 20, total: 30, message: "step 2" },
      { progress: 30, total: 30, message: "step 3" },
    ]);
    assert.equal(logs, [1, 2, 3].map((i) => ({ level: "info", logger: "progress", data: { progress: i * 10, total: 30, message: `step ${i}` } })));
    await client.setLoggingLevel("warning");
    logs.length = 0;
    await client.callTool({ name: "steps", arguments: { n: 1 } });
    assert.equal(logs, [], "info events are below the level the client set");
    await client.close();
  } finally {
    await t.close();
  }
});

test("deadline: _meta deadlineMs ends a hanging call `timeout` (a tool error with its status), the host's signal is aborted", async () => {
  const t = await setup();
  try {
    const { client, transport } = await connect(t.runtime, t.key);
    const r = await client.callTool({ name: "hang", arguments: {}, _meta: { "aexhq.brain/deadlineMs": 150 } });
    assert.is(r.isError, true);
    assert.is((r._meta as Record<string, unknown>)["aexhq.brain/status"], "timeout");
    assert.match((r.content as Array<{ text: string }>)[0]!.text, /^timeout: /);
    const all = await records(t.runtime, transport.sessionId!);
    assert.equal(ofType(all, "tool.finished").map((f) => f.data.status), ["timeout"]);
    const started = ofType(all, "tool.call_started")[0]!;
    assert.ok(started.data.deadlineAt !== null && started.data.deadlineAt - started.at <= 150 && started.data.deadlineAt - started.at > 100, "the deadline is journaled with the intent");
    await client.close();
  } finally {
    await t.close();
  }
});

test("cancellation: the client's notifications/cancelled ends the call `cancelled` in the journal and aborts the host's signal", async () => {
  const t = await setup();
  try {
    const { client, transport } = await connect(t.runtime, t.key);
    const stop = new AbortController();
    const before = aborted.length;
    const pending = client.callTool({ name: "hang", arguments: {} }, undefined, { signal: stop.signal });
    const sid = transport.sessionId!;
    await waitRecords(t.runtime, sid, (all) => ofType(all, "tool.event").length === 1);
    stop.abort("the user gave up");
    await pending.then(() => assert.unreachable("an aborted request rejects"), (e) => assert.match(String(e), /gave up|abort/i));
    const all = await waitRecords(t.runtime, sid, (rs) => ofType(rs, "tool.finished").length === 1);
    assert.equal(ofType(all, "tool.finished").map((f) => [f.data.status, f.data.message]), [["cancelled", "cancelled by request"]]);
    // Up to 5 s: the host's abort follows the cancel frame, which a loaded machine may deliver late.
    for (let i = 0; i < 500 && aborted.length === before; i++) await sleep(10);
    assert.is(aborted.length, before + 1, "the host's ctx.signal was aborted");
    // The session goes on: a later call works.
    assert.equal((await client.callTool({ name: "echo", arguments: { text: "after" } })).structuredContent, { text: "after", length: 5 });
    await client.close();
  } finally {
    await t.close();
  }
});

test("host dropped mid-call: the call ends `unknown` (never re-sent) and the client gets it as a tool error", async () => {
  const runtime = await memoryBrain({ hostTimeoutMs: 600 });
  const key = await newKey(runtime, "crash");
  const host = spawn(process.execPath, ["--conditions=brain-source", "--import", "tsx", fileURLToPath(new URL("./mcp/host-main.mts", import.meta.url))], {
    env: { ...process.env, BRAIN_URL: runtime.url, BRAIN_TOKEN: key },
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      host.stdout!.on("data", (d: Buffer) => d.toString().includes("ready") && resolve());
      host.once("exit", (code) => reject(new Error(`the host exited (${code}) before it was ready`)));
    });
    const { client, transport } = await connect(runtime, key);
    const pending = client.callTool({ name: "hang", arguments: {} });
    await waitRecords(runtime, transport.sessionId!, (all) => ofType(all, "tool.event").length === 1);
    host.kill("SIGKILL");
    const r = await pending;
    assert.is(r.isError, true);
    assert.is((r._meta as Record<string, unknown>)["aexhq.brain/status"], "unknown");
    assert.match((r.content as Array<{ text: string }>)[0]!.text, /^unknown: /);
    const all = await records(runtime, transport.sessionId!);
    assert.equal(ofType(all, "tool.call_started").length, 1, "never re-sent");
    assert.equal(ofType(all, "tool.finished").map((f) => f.data.status), ["unknown"]);
    await client.close();
  } finally {
    host.kill("SIGKILL");
    await runtime.close();
  }
});

test("another key sees neither the MCP session nor its Brain session, nor the first key's tools", async () => {
  const t = await setup();
  try {
    const { client, transport } = await connect(t.runtime, t.key);
    const other = await newKey(t.runtime, "other");
    const res = await fetch(`${t.runtime.url}/v1/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${other}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": transport.sessionId!, "mcp-protocol-version": "2025-11-25" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    assert.is(res.status, 404);
    assert.is(((await res.json()) as { error: { code: number } }).error.code, -32001);
    assert.is((await api(t.runtime, "GET", `/v1/sessions/${transport.sessionId}`, undefined, { token: other })).status, 404);
    const second = await connect(t.runtime, other);
    assert.equal((await second.client.listTools()).tools, [], "the other key has no host connected: no tools");
    await second.client.close();
    await client.close();
  } finally {
    await t.close();
  }
});

test("bad requests get JSON-RPC errors with 4xx statuses, never 500", async () => {
  const t = await setup();
  try {
    const url = `${t.runtime.url}/v1/mcp`;
    const headers = { authorization: `Bearer ${t.key}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
    const cases: Array<[string, RequestInit, number]> = [
      ["no token", { method: "POST", headers: { ...headers, authorization: "" }, body: JSON.stringify(init) }, 401],
      ["wrong token", { method: "POST", headers: { ...headers, authorization: "Bearer nope" }, body: JSON.stringify(init) }, 401],
      ["not JSON", { method: "POST", headers, body: "{nope" }, 400],
      ["not initialize, no session", { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) }, 400],
      ["unknown session", { method: "POST", headers: { ...headers, "mcp-session-id": "ses_nope" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) }, 404],
      ["GET without session", { method: "GET", headers }, 400],
      ["PUT", { method: "PUT", headers, body: "{}" }, 405],
      ["evil Host", { method: "POST", headers: { ...headers, host: "evil.example.com" }, body: JSON.stringify(init) }, 403],
      ["evil Origin", { method: "POST", headers: { ...headers, origin: "http://evil.example.com" }, body: JSON.stringify(init) }, 403],
      ["not a JSON-RPC message", { method: "POST", headers: { ...headers }, body: JSON.stringify({ hello: 1 }) }, 400],
    ];
    for (const [name, req, status] of cases) {
      const res = await rawRequest(url, req);
      assert.is(res.status, status, `${name}: ${res.status} ${res.text}`);
      const body = JSON.parse(res.text) as { jsonrpc: string; error: { code: number; message: string } };
      assert.is(body.jsonrpc, "2.0", name);
      assert.type(body.error.code, "number", name);
      assert.ok(body.error.message.length > 0, name);
    }
    // An initialize the MCP transport refuses (this one cannot take an SSE answer) opens no session: its Brain session is deleted at once.
    const refused = await rawRequest(url, { method: "POST", headers: { ...headers, accept: "application/json" }, body: JSON.stringify(init) });
    assert.is(refused.status, 406, refused.text);
    assert.is((JSON.parse(refused.text) as { jsonrpc: string }).jsonrpc, "2.0");
    const live = await api(t.runtime, "GET", "/v1/sessions?status=idle", undefined, { token: t.key });
    assert.equal(live.body.sessions, [], "no Brain session is left open by refused requests");
    // A loopback Origin is fine.
    const ok = await rawRequest(url, { method: "POST", headers: { ...headers, origin: "http://localhost:5173" }, body: JSON.stringify(init) });
    assert.is(ok.status, 200, ok.text);
    // The requests are counted under their own route label.
    const metrics = await (await fetch(`${t.runtime.url}/metrics`, { headers: { authorization: `Bearer ${t.runtime.token}` } })).text();
    assert.match(metrics, /brain_http_requests_total\{method="POST",route="\/v1\/mcp",status="401"\} 2/);
  } finally {
    await t.close();
  }
});

test("DELETE ends the MCP session and deletes its Brain session (its records stay readable)", async () => {
  const t = await setup();
  try {
    const { client, transport } = await connect(t.runtime, t.key);
    await client.callTool({ name: "echo", arguments: { text: "x" } });
    const sid = transport.sessionId!;
    await transport.terminateSession();
    await client.close();
    const all = await waitRecords(t.runtime, sid, (rs) => rs.some((r) => r.type === "session.deleted"));
    assert.is(all.at(-1)!.type, "session.deleted");
  } finally {
    await t.close();
  }
});

test("the runtime's default deadline (mcp.deadlineMs) bounds a call that names none; a bad mcp option stops the start", async () => {
  const t = await setup({ mcp: { deadlineMs: 120 } });
  try {
    const { client } = await connect(t.runtime, t.key);
    const r = await client.callTool({ name: "hang", arguments: {} });
    assert.is((r._meta as Record<string, unknown>)["aexhq.brain/status"], "timeout");
    await client.close();
  } finally {
    await t.close();
  }
  for (const mcp of [{ idleMs: 0 }, { deadlineMs: -1 }, { deadlineMs: 1.5 }]) {
    try {
      const runtime = await memoryBrain({ mcp });
      await runtime.close();
      assert.unreachable(`startBrain accepted ${JSON.stringify(mcp)}`);
    } catch (e) {
      assert.match(String(e), /must be an integer \(ms\)/);
    }
  }
});

test("an MCP session idle for mcp.idleMs ends: its id is 404 and its Brain session is deleted; one with a call open does not", async () => {
  // Margins for a loaded machine: a stall of the event loop longer than idleMs would end the busy session before its call starts.
  const t = await setup({ mcp: { idleMs: 500 } });
  try {
    const busy = await connect(t.runtime, t.key);
    const hanging = busy.client.callTool({ name: "hang", arguments: {}, _meta: { "aexhq.brain/deadlineMs": 2500 } });
    const { client, transport } = await connect(t.runtime, t.key);
    await client.callTool({ name: "echo", arguments: { text: "x" } });
    const sid = transport.sessionId!;
    const all = await waitRecords(t.runtime, sid, (rs) => rs.some((r) => r.type === "session.deleted"));
    assert.is(all.at(-1)!.type, "session.deleted");
    try {
      await client.listTools();
      assert.unreachable("the idle session is gone");
    } catch (e) {
      assert.match(String(e), /404|no MCP session/);
    }
    // The session with a call open outlived idleMs many times over; its call ends by its deadline.
    assert.is(((await hanging)._meta as Record<string, unknown>)["aexhq.brain/status"], "timeout");
    assert.equal((await busy.client.callTool({ name: "echo", arguments: { text: "still here" } })).structuredContent, { text: "still here", length: 10 });
    await busy.client.close();
  } finally {
    await t.close();
  }
});

/** fetch, except a Host header is sent as given (fetch refuses to set Host). */
async function rawRequest(url: string, init: RequestInit): Promise<{ status: number; text: string }> {
  const { request } = await import("node:http");
  const u = new URL(url);
  const headers = Object.fromEntries(Object.entries((init.headers ?? {}) as Record<string, string>).filter(([, v]) => v !== ""));
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: init.method, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: firstJson(text) }));
    });
    req.on("error", reject);
    if (typeof init.body === "string") req.write(init.body);
    req.end();
  });
}

/** An SSE answer's first `data:` line, or the body as it is. */
function firstJson(text: string): string {
  const data = /^data: (.*)$/m.exec(text);
  return data ? data[1]! : text;
}

async function waitRecords(runtime: Runtime, id: string, pred: (all: Awaited<ReturnType<typeof records>>) => boolean) {
  for (let i = 0; i < 300; i++) {
    const all = await records(runtime, id);
    if (pred(all)) return all;
    await sleep(15);
  }
  throw new Error("timed out waiting for the journal");
}

test.run();
