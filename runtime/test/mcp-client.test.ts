// MCP servers as an Environment, end to end against real servers from npm:
// @modelcontextprotocol/server-everything (stdio, and Streamable HTTP as its own process) and
// @modelcontextprotocol/server-filesystem (stdio), plus a small raw JSON-RPC server
// (mcp-fixtures/line-server.mjs) for what real servers will not do on purpose: record what it
// receives, hang in initialize, answer a malformed result, advertise a remote $ref. Sessions are
// created over HTTP with the contracts GET /v1/mcp-servers/:name/tools gives, and a scripted model
// makes the calls.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync, existsSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { createServer as createHttpServer } from "node:http";
import type { Server as HttpServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { validate } from "@aexhq/brain-protocol";
import type { JournalRecord, PlacedTool } from "@aexhq/brain-protocol";
import { api, assertJournal, createSession, memoryBrain, ofType, records, waitFor } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { startBrain } from "../src/index.ts";
import { configFromEnv } from "../src/config.ts";

const NODE = process.execPath;
const EVERYTHING = fileURLToPath(new URL("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url));
const FILESYSTEM = fileURLToPath(new URL("../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url));
const LINE = fileURLToPath(new URL("./mcp-fixtures/line-server.mjs", import.meta.url));

const dir = mkdtempSync(join(tmpdir(), "brain-mcp-"));
const files = join(dir, "files");
const recLog = join(dir, "rec.log");
const recPid = join(dir, "rec.pid");
const evPid = join(dir, "everything.pid");
let brain: Brain;
let http: ChildProcess;
let httpPort: number;

/** A stdio server started through sh, which writes its pid first: the test can kill exactly that process. */
const withPid = (pidFile: string, args: string[]) => ({ command: "sh", args: ["-c", `echo $$ > '${pidFile}'; exec "$@"`, "sh", NODE, ...args] });

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

async function startHttpEverything(): Promise<void> {
  http = spawn(NODE, [EVERYTHING, "streamableHttp"], { env: { ...process.env, PORT: String(httpPort) }, stdio: ["ignore", "ignore", "pipe"] });
  await new Promise<void>((resolve, reject) => {
    let err = "";
    http.stderr!.on("data", (d) => {
      err += d;
      if (/listening on port/.test(err)) resolve();
    });
    http.once("exit", () => reject(new Error(`server-everything streamableHttp exited: ${err}`)));
  });
}

/**
 * A Streamable HTTP MCP server that forgets every session as soon as it is made: it initializes and
 * lists one tool, then answers every tools/call 404 (MCP's "unknown session"). It counts what it got.
 */
const forgetful = { initializes: 0, calls: 0, server: undefined as HttpServer | undefined, port: 0 };
async function startForgetful(): Promise<void> {
  forgetful.server = createHttpServer((req, res) => {
    if (req.method !== "POST") return void res.writeHead(405).end();
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const m = JSON.parse(body) as { id?: number | string; method: string; params?: { protocolVersion?: string } };
      const json = (v: unknown) => res.writeHead(200, { "content-type": "application/json", "mcp-session-id": `s${forgetful.initializes}` }).end(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: v }));
      if (m.method === "initialize") {
        forgetful.initializes++;
        return json({ protocolVersion: m.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "forgetful", version: "1" } });
      }
      if (m.id === undefined) return void res.writeHead(202).end();
      if (m.method === "tools/list") return json({ tools: [{ name: "add", inputSchema: { type: "object", properties: { a: { type: "number" } } } }] });
      if (m.method === "tools/call") forgetful.calls++;
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } }));
    });
  });
  await new Promise<void>((r) => forgetful.server!.listen(0, "127.0.0.1", r));
  forgetful.port = (forgetful.server.address() as { port: number }).port;
}

test.before(async () => {
  await startForgetful();
  await import("node:fs").then((fs) => fs.mkdirSync(files));
  writeFileSync(join(files, "hello.txt"), "hello from a file\n");
  httpPort = await freePort();
  await startHttpEverything();
  brain = await memoryBrain({
    mcpServers: {
      everything: { command: NODE, args: [EVERYTHING, "stdio"] },
      killable: withPid(evPid, [EVERYTHING, "stdio"]),
      fs: { command: NODE, args: [FILESYSTEM, files] },
      web: { url: `http://127.0.0.1:${httpPort}/mcp` },
      forgetful: { url: `http://127.0.0.1:${forgetful.port}/mcp` },
      rec: withPid(recPid, [LINE, "ok", recLog]),
      hang: { command: NODE, args: [LINE, "hang-initialize"], initializeTimeoutMs: 300 },
      garbage: { command: NODE, args: [LINE, "garbage-initialize"], initializeTimeoutMs: 2000 },
      missing: { command: join(dir, "no-such-server") },
      malformed: { command: NODE, args: [LINE, "malformed"] },
      remoteref: { command: NODE, args: [LINE, "remote-ref"] },
    },
  });
});

test.after(async () => {
  await brain?.close();
  http?.kill();
  forgetful.server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The tool as GET /v1/mcp-servers/:server/tools lists it, placed with an mcp placement. */
async function placed(server: string, tool: string): Promise<PlacedTool> {
  const r = await api(brain, "GET", `/v1/mcp-servers/${server}/tools`);
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.ok(validate.McpServerTools.Check(r.body), JSON.stringify(r.body).slice(0, 500));
  const found = r.body.tools.find((t: { tool: string }) => t.tool === tool);
  assert.ok(found, `${server} lists ${tool}: ${r.body.tools.map((t: { tool: string }) => t.tool).join(", ")}`);
  return { contract: found.contract, options: {}, placement: { kind: "mcp", server, tool } };
}

type Call = { name: string; input: unknown; deadlineMs?: number };

/** One turn whose scripted model makes `calls`; the journal once the turn completed. */
async function turn(tools: PlacedTool[], calls: Call[]): Promise<JournalRecord[]> {
  const s = await createSession(brain, tools, [{ toolCalls: calls }, { text: "done" }]);
  const r = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go", wait: true });
  assert.is(r.status, 200, JSON.stringify(r.body));
  const all = await records(brain, s.id);
  assertJournal(all);
  return all;
}

const results = (all: JournalRecord[]) => ofType(all, "tool.result").map((r) => r.data as { outcome: { status: string; value?: any; error?: any }; content?: string });
const finished = (all: JournalRecord[]) => ofType(all, "tool.finished").map((r) => r.data as { status: string; message?: string; error?: any });
const received = () => (existsSync(recLog) ? readFileSync(recLog, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);
const pidOf = (file: string) => Number(readFileSync(file, "utf8").trim());

async function refusal(tool: PlacedTool): Promise<{ status: number; code: string; message: string }> {
  const r = await api(brain, "POST", "/v1/sessions", { model: { provider: "scripted", script: [{ text: "unused" }] }, tools: [tool] });
  assert.ok(validate.ErrorBody.Check(r.body), JSON.stringify(r.body));
  return { status: r.status, code: r.body.error.code, message: r.body.error.message };
}

for (const [server, transport] of [["everything", "stdio"], ["web", "Streamable HTTP"]] as const) {
  test(`${transport}: a call's text content is journaled with its result, and the content blocks are the value`, async () => {
    const all = await turn([await placed(server, "echo")], [{ name: "echo", input: { message: "hi there" } }]);
    const [r] = results(all);
    assert.is(r!.outcome.status, "ok");
    assert.is(r!.content, "Echo: hi there");
    assert.equal(r!.outcome.value, [{ type: "text", text: "Echo: hi there" }]);
  });

  test(`${transport}: structuredContent is the value, checked against the advertised outputSchema`, async () => {
    const tool = await placed(server, "get-structured-content");
    assert.ok(tool.contract.outputSchema, "the server's outputSchema is the contract's");
    const all = await turn([tool], [{ name: "get-structured-content", input: { location: "Chicago" } }]);
    const [r] = results(all);
    assert.is(r!.outcome.status, "ok", JSON.stringify(r));
    assert.type(r!.outcome.value.temperature, "number");
    assert.type(r!.outcome.value.conditions, "string");
  });

  test(`${transport}: progress notifications are journaled as tool.event records before the result`, async () => {
    const all = await turn([await placed(server, "trigger-long-running-operation")], [{ name: "trigger-long-running-operation", input: { duration: 0.3, steps: 3 } }]);
    const events = ofType(all, "tool.event");
    assert.equal(events.map((e) => e.data.kind), ["progress", "progress", "progress"]);
    assert.equal(events.map((e) => e.data.data), [{ progress: 1, total: 3 }, { progress: 2, total: 3 }, { progress: 3, total: 3 }]);
    const result = ofType(all, "tool.result")[0]!;
    assert.ok(events.every((e) => e.sequence < result.sequence));
    assert.is(finished(all)[0]!.status, "ok");
  });

  test(`${transport}: the caller's deadline ends a long call timeout`, async () => {
    const started = Date.now();
    const all = await turn([await placed(server, "trigger-long-running-operation")], [{ name: "trigger-long-running-operation", input: { duration: 20, steps: 20 }, deadlineMs: 400 }]);
    assert.is(finished(all)[0]!.status, "timeout");
    assert.ok(Date.now() - started < 10_000, "the turn did not wait for the operation");
  });
}

test("stdio: a server killed mid-call ends the call unknown, and is started again for the next call", async () => {
  const tool = await placed("killable", "trigger-long-running-operation");
  const s = await createSession(brain, [tool], [{ toolCalls: [{ name: "trigger-long-running-operation", input: { duration: 20, steps: 20 } }] }, { text: "done" }]);
  await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go" });
  await waitFor(brain, s.id, (r) => r.type === "tool.event", 8000);
  process.kill(pidOf(evPid), "SIGKILL");
  const all = await waitFor(brain, s.id, (r) => r.type === "turn.completed", 8000);
  const [f] = finished(all);
  assert.is(f!.status, "unknown");
  assert.match(f!.message ?? "", /never re-sent/);
  // A new process serves the next call.
  const again = await turn([await placed("killable", "echo")], [{ name: "echo", input: { message: "back" } }]);
  assert.is(results(again)[0]!.outcome.status, "ok");
});

test("stdio: tools/call is sent once; a killed server's call is not sent again", async () => {
  writeFileSync(recLog, "");
  const tool = await placed("rec", "slow");
  const s = await createSession(brain, [tool], [{ toolCalls: [{ name: "slow", input: {} }] }, { text: "done" }]);
  await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go" });
  for (let i = 0; i < 100 && !received().some((m) => m.method === "tools/call"); i++) await new Promise((r) => setTimeout(r, 50));
  process.kill(pidOf(recPid), "SIGKILL");
  const all = await waitFor(brain, s.id, (r) => r.type === "turn.completed", 8000);
  assert.is(finished(all)[0]!.status, "unknown");
  // The next call starts a new process: the log then shows a second initialize, yet one tools/call for "slow".
  await turn([await placed("rec", "add")], [{ name: "add", input: { a: 2, b: 3 } }]);
  const calls = received().filter((m) => m.method === "tools/call");
  assert.equal(calls.map((c) => c.params.name), ["slow", "add"]);
  assert.is(received().filter((m) => m.method === "initialize").length >= 2, true);
});

test("the deadline sends notifications/cancelled for the request, then the call is timeout", async () => {
  writeFileSync(recLog, "");
  const all = await turn([await placed("rec", "slow")], [{ name: "slow", input: {}, deadlineMs: 300 }]);
  assert.is(finished(all)[0]!.status, "timeout");
  // Up to 10 s: the server logs the notification when a loaded machine schedules its process.
  for (let i = 0; i < 200 && !received().some((m) => m.method === "notifications/cancelled"); i++) await new Promise((r) => setTimeout(r, 50));
  const call = received().find((m) => m.method === "tools/call");
  const cancel = received().find((m) => m.method === "notifications/cancelled");
  assert.ok(cancel, "notifications/cancelled was sent");
  assert.is(cancel.params.requestId, call.id);
});

test("cancelling the session's calls sends notifications/cancelled and ends the call cancelled", async () => {
  writeFileSync(recLog, "");
  const s = await createSession(brain, [await placed("rec", "slow")], [{ toolCalls: [{ name: "slow", input: {} }] }, { text: "done" }]);
  await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go" });
  await waitFor(brain, s.id, (r) => r.type === "tool.call_started");
  for (let i = 0; i < 100 && !received().some((m) => m.method === "tools/call"); i++) await new Promise((r) => setTimeout(r, 50));
  const c = await api(brain, "POST", `/v1/sessions/${s.id}/cancel`, {});
  assert.is(c.status, 200, JSON.stringify(c.body));
  const all = await waitFor(brain, s.id, (r) => r.type === "tool.finished");
  assert.is(finished(all)[0]!.status, "cancelled");
  // Up to 10 s: the server logs the notification when a loaded machine schedules its process.
  for (let i = 0; i < 200 && !received().some((m) => m.method === "notifications/cancelled"); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(received().some((m) => m.method === "notifications/cancelled"));
});

test("Streamable HTTP: the server process killed mid-call ends the call unknown; after its restart the next call goes on a new MCP session", async () => {
  const tool = await placed("web", "trigger-long-running-operation");
  const s = await createSession(brain, [tool], [{ toolCalls: [{ name: "trigger-long-running-operation", input: { duration: 20, steps: 20 } }] }, { text: "done" }]);
  await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go" });
  await waitFor(brain, s.id, (r) => r.type === "tool.event", 8000);
  http.kill("SIGKILL");
  const all = await waitFor(brain, s.id, (r) => r.type === "turn.completed", 15000);
  assert.is(finished(all)[0]!.status, "unknown");
  // A new server process on the same URL knows nothing of Brain's MCP session: it answers the next
  // call's POST 404, which by MCP's rules it did not process, so Brain starts a new MCP session and
  // sends that call on it, once: the call succeeds, and so does the one after it.
  await startHttpEverything();
  for (const message of ["again", "and again"]) {
    const all = await turn([await placed("web", "echo")], [{ name: "echo", input: { message } }]);
    assert.equal(all.filter((r) => r.type === "tool.call_started").length, 1);
    assert.is(finished(all)[0]!.status, "ok", JSON.stringify(finished(all)));
    assert.match(results(all)[0]!.content ?? "", new RegExp(`Echo: ${message}$`));
  }
});

test("Streamable HTTP: a call refused for its MCP session twice (404, on the old session and a new one) ends unavailable, sent at most twice, never again", async () => {
  const add = await placed("forgetful", "add");
  const before = { ...forgetful };
  const all = await turn([add], [{ name: "add", input: { a: 1 } }]);
  assert.equal([finished(all)[0]!.status, finished(all)[0]!.error?.code], ["error", "unavailable"], JSON.stringify(finished(all)));
  assert.match(finished(all)[0]!.error?.message ?? "", /no longer knows this MCP session \(HTTP 404\)/);
  assert.is(forgetful.calls - before.calls, 2, "the refused call went once on the old session and once on a new one");
  assert.is(forgetful.initializes - before.initializes, 1, "one new MCP session");
});

test("filesystem: a file is read; isError: true is an error outcome with the server's text", async () => {
  const read = await placed("fs", "read_text_file");
  const all = await turn([read], [{ name: "read_text_file", input: { path: join(files, "hello.txt") } }, { name: "read_text_file", input: { path: join(files, "absent.txt") } }]);
  const rs = results(all);
  const ok = rs.find((r) => r.outcome.status === "ok");
  const bad = rs.find((r) => r.outcome.status !== "ok");
  assert.is(ok!.outcome.status, "ok", JSON.stringify(ok));
  assert.match(ok!.content ?? "", /hello from a file/);
  assert.is(bad!.outcome.status, "error");
  assert.is(bad!.outcome.error.code, "tool_error");
  assert.match(bad!.outcome.error.message, /ENOENT|no such file|not found/i);
});

test("input that does not match the server's inputSchema ends invalid_input without a tools/call, with its result as every Environment journals it", async () => {
  writeFileSync(recLog, "");
  const all = await turn([await placed("rec", "add")], [{ name: "add", input: { a: "two" } }]);
  assert.equal([finished(all)[0]!.status, finished(all)[0]!.error?.code], ["error", "invalid_input"], JSON.stringify(finished(all)));
  // tool.result (the error outcome, with the issues) then tool.finished, as for hosts, components and descriptors.
  assert.equal(all.filter((r) => r.type.startsWith("tool.")).map((r) => r.type), ["tool.call_started", "tool.result", "tool.finished"]);
  assert.is(results(all)[0]!.outcome.error.code, "invalid_input");
  assert.ok(Array.isArray(results(all)[0]!.outcome.error.details) && results(all)[0]!.outcome.error.details.length > 0, JSON.stringify(results(all)));
  assert.is(received().filter((m) => m.method === "tools/call").length, 0);
});

test("bad servers are typed refusals at session creation, never a hang or internal", async () => {
  const add = await placed("rec", "add");
  const as = (server: string, tool = "add"): PlacedTool => ({ ...add, placement: { kind: "mcp", server, tool } });
  const missing = await refusal(as("missing"));
  assert.equal([missing.status, missing.code], [503, "unavailable"]);
  assert.match(missing.message, /MCP server missing could not be started/);
  const hang = await refusal(as("hang"));
  assert.equal([hang.status, hang.code], [503, "unavailable"]);
  assert.match(hang.message, /did not answer initialize within 300 ms/);
  // Answered with a line that is not JSON: the same bounded refusal, saying what the transport made of it.
  const garbage = await refusal(as("garbage"));
  assert.equal([garbage.status, garbage.code], [503, "unavailable"]);
  assert.match(garbage.message, /did not answer initialize within 2000 ms \(the transport reported: .*not valid JSON/);
  const undefinedServer = await refusal(as("nope"));
  assert.equal([undefinedServer.status, undefinedServer.code], [400, "unsupported"]);
  const noTool = await refusal(as("rec", "subtract"));
  assert.equal([noTool.status, noTool.code], [404, "not_found"]);
  const changed = await refusal({ ...add, contract: { ...add.contract, inputSchema: { type: "object" }, digest: "" } });
  assert.is(changed.code, "invalid_request"); // the request's own digest is checked first
  const listed = await api(brain, "GET", "/v1/mcp-servers/remoteref/tools");
  assert.equal(listed.body.skipped.map((s: { tool: string }) => s.tool), ["remote"]);
  assert.match(listed.body.skipped[0].reason, /only references inside the schema/);
  const unknownServer = await api(brain, "GET", "/v1/mcp-servers/nope/tools");
  assert.is(unknownServer.status, 404);
});

test("the server advertising other schemas than the placed contract is digest_mismatch", async () => {
  const add = await placed("rec", "add");
  const c = { name: "add", description: "Adds.", inputSchema: { type: "object", properties: { a: { type: "number" } } } };
  const { contractDigest } = await import("../src/index.ts");
  const r = await refusal({ ...add, contract: { ...c, digest: contractDigest(c) } });
  assert.equal([r.status, r.code], [400, "digest_mismatch"], r.message);
});

test("a malformed tools/call answer ends the call invalid_output", async () => {
  const all = await turn([await placed("malformed", "add")], [{ name: "add", input: { a: 1, b: 2 } }]);
  assert.equal([finished(all)[0]!.status, finished(all)[0]!.error?.code], ["error", "invalid_output"], JSON.stringify(finished(all)));
});

test("stdio: answers are read as the SDK's client reads them: split across writes, rich content, neither result nor error, JSON-RPC errors", async () => {
  const one = async (tool: string, input: unknown = {}) => {
    const all = await turn([await placed("rec", tool)], [{ name: tool, input }]);
    return { result: results(all)[0], finished: finished(all)[0]! };
  };
  const split = await one("split");
  assert.equal([split.result!.outcome.status, split.result!.content], ["ok", "two halves é"]);
  const rich = await one("rich");
  assert.is(rich.result!.outcome.status, "ok", JSON.stringify(rich));
  assert.equal(rich.result!.outcome.value, { n: 1 });
  assert.is(rich.result!.content, "annotated");
  const none = await one("no-envelope");
  assert.equal([none.finished.status, none.finished.error?.code], ["error", "invalid_output"], JSON.stringify(none));
  const invalid = await one("refuse");
  assert.equal([invalid.finished.status, invalid.finished.error?.code], ["error", "invalid_input"], JSON.stringify(invalid));
  assert.equal(invalid.finished.error?.details, { jsonrpcCode: -32602, data: { why: "test" } });
  const other = await one("refuse", { code: -32099 });
  assert.equal([other.finished.status, other.finished.error?.code], ["error", "tool_error"], JSON.stringify(other));
  assert.match(other.finished.error?.message ?? "", /refused here/);
});

test("bad definitions stop startBrain and brain serve with a message naming the entry", async () => {
  const refusedBy = (o: Parameters<typeof startBrain>[0]) => startBrain(o).then((b) => b.close().then(() => "started"), (e: Error) => e.message);
  assert.match(await refusedBy({ journal: "memory", port: 0, mcpServers: { fs: { command: "x", url: "http://a" } as never } }), /mcpServers\.fs must have exactly one of "command"/);
  assert.match(await refusedBy({ journal: "memory", port: 0, mcpServers: { fs: { url: "ftp://a" } } }), /mcpServers\.fs\.url must be an absolute http\(s\) URL/);
  assert.throws(() => configFromEnv({ BRAIN_MCP_SERVERS: "{nope", BRAIN_TOKEN: "t" }), /BRAIN_MCP_SERVERS must be a JSON object; it is not valid JSON/);
  assert.throws(() => configFromEnv({ BRAIN_MCP_SERVERS: '{"fs":{"command":"x","shell":true}}', BRAIN_TOKEN: "t" }), /BRAIN_MCP_SERVERS\.fs has unknown key "shell"/);
  assert.equal(configFromEnv({ BRAIN_MCP_SERVERS: '{"fs":{"command":"x","args":["a"]}}', BRAIN_TOKEN: "t" }).mcpServers, { fs: { command: "x", args: ["a"] } });
});

test("the MCP client's wire is one file: only environments/mcp/wire.ts imports the MCP SDK", () => {
  const folder = fileURLToPath(new URL("../src/environments/mcp/", import.meta.url));
  const importers = readdirSync(folder).filter((f) => /(from|import)\s*\(?\s*"@modelcontextprotocol\//.test(readFileSync(join(folder, f), "utf8")));
  assert.equal(importers, ["wire.ts"]);
});

test.run();
