// Plain-JSON HTTP tools (the v1 http()/httpTool() placements) end to end: a real local HTTP server
// is the endpoint, sessions are created over real HTTP with `http_plain` placements, and the
// scripted model calls them. The endpoint sees only the input as its body and the call's headers;
// its 2xx JSON answer is the tool's value.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createServer } from "node:http";
import type { IncomingHttpHeaders, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validate } from "@aexhq/brain-protocol";
import type { JournalRecord, PlacedTool, ToolContract } from "@aexhq/brain-protocol";
import { api, assertJournal, createSession, memoryBrain, ofType, records, waitFor } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { orAfter } from "./helpers/provider-server.ts";
import { contractDigest, startBrain } from "../src/index.ts";

/** One request the endpoint received. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Resolves true when the client went away before the endpoint answered. */
  aborted: Promise<boolean>;
}

let seen: Seen[] = [];
/** How the endpoint answers the current test's requests; by default it echoes the input. */
let respond: (s: Seen, res: ServerResponse) => void;
const echo = (s: Seen, res: ServerResponse) => json(res, 200, JSON.parse(s.body));

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
}

let server: Server;
let origin: string;
let closedOrigin: string;
let brain: Brain;

test.before(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const aborted = new Promise<boolean>((resolve) => res.on("close", () => resolve(!res.writableFinished)));
      const s: Seen = { method: req.method!, url: req.url!, headers: req.headers, body, aborted };
      seen.push(s);
      respond(s, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // A port nobody listens on (allowed, so the request is attempted): connection refused.
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  closedOrigin = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
  await new Promise((r) => probe.close(r));
  brain = await memoryBrain({ httpToolOrigins: [origin, closedOrigin] });
});

test.before.each(() => {
  seen = [];
  respond = echo;
});

test.after(async () => {
  await brain?.close();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

function plainTool(name: string, url: string, opts: { inputSchema?: Record<string, unknown>; outputSchema?: Record<string, unknown>; options?: Record<string, unknown> } = {}): PlacedTool {
  const c = { name, description: `the ${name} tool`, inputSchema: opts.inputSchema ?? { type: "object" }, ...(opts.outputSchema ? { outputSchema: opts.outputSchema } : {}) };
  const contract: ToolContract = { ...c, digest: contractDigest(c) };
  return { contract, options: (opts.options ?? {}) as never, placement: { kind: "http_plain", url } };
}

/** One turn whose scripted model makes `calls`; returns the journal once the turn completed. */
async function turn(tools: PlacedTool[], calls: { name: string; input: unknown; deadlineMs?: number }[]): Promise<JournalRecord[]> {
  const s = await createSession(brain, tools, [{ toolCalls: calls }, { text: "done" }]);
  const r = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go", wait: true });
  assert.is(r.status, 200, JSON.stringify(r.body));
  const all = await records(brain, s.id);
  assertJournal(all);
  return all;
}

/** Whether the client aborted `s` within a few seconds (false, not a hang, when it never does). */
const abortedSoon = (s: Seen) => orAfter(s.aborted, 3000, false);

const outcomes = (all: JournalRecord[]) => ofType(all, "tool.result").map((r) => r.data.outcome as { status: string; value?: any; error?: any });
const statuses = (all: JournalRecord[]) => ofType(all, "tool.finished").map((r) => r.data.status);
/** Each call's tool.finished by tool name. */
function finishedByTool(all: JournalRecord[]) {
  const byId = new Map(ofType(all, "tool.call_started").map((r) => [r.data.callId, r.data.tool]));
  return Object.fromEntries(ofType(all, "tool.finished").map((r) => [byId.get(r.data.callId)!, r.data]));
}
function resultsByTool(all: JournalRecord[]) {
  const byId = new Map(ofType(all, "tool.call_started").map((r) => [r.data.callId, r.data.tool]));
  return Object.fromEntries(ofType(all, "tool.result").map((r) => [byId.get(r.data.callId)!, r.data.outcome as { status: string; value?: any; error?: any }]));
}

async function refused(tool: PlacedTool): Promise<{ status: number; error: { code: string; message: string; details?: any } }> {
  const r = await api(brain, "POST", "/v1/sessions", { model: { provider: "scripted", script: [{ text: "unused" }] }, tools: [tool] });
  assert.ok(validate.ErrorBody.Check(r.body), `ErrorBody: ${JSON.stringify(r.body)}`);
  return { status: r.status, error: r.body.error };
}

test("ok: the input is the POST body, the call is named in headers, and the 2xx JSON body is the value (an envelope-looking body too)", async () => {
  const lookup = plainTool("lookup", `${origin}/tools/lookup?v=1`, {
    inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
    outputSchema: { type: "object", properties: { status: { type: "string" }, value: { type: "string" } }, required: ["status", "value"] },
    options: { prefix: "customer:", note: "Grüße ✓" },
  });
  respond = (s, res) => json(res, 200, { status: "ok", value: `${JSON.parse(s.body).id}!` });
  const all = await turn([lookup], [{ name: "lookup", input: { id: "42" }, deadlineMs: 60_000 }]);
  assert.is(seen.length, 1);
  const [s] = seen;
  assert.is(s!.method, "POST");
  assert.is(s!.url, "/tools/lookup?v=1", "the query string is kept");
  assert.equal(JSON.parse(s!.body), { id: "42" });
  assert.is(s!.headers["content-type"], "application/json");
  const started = ofType(all, "tool.call_started")[0]!;
  assert.is(s!.headers["brain-call-id"], started.data.callId);
  assert.is(s!.headers["brain-session-id"], started.data.callId.split(":")[0]);
  assert.is(s!.headers["brain-sequence"], String(started.sequence));
  assert.is(s!.headers["brain-tool"], "lookup");
  assert.is(s!.headers["brain-deadline-at"], String(started.data.deadlineAt));
  assert.ok(/^[\x20-\x7e]*$/.test(s!.headers["brain-tool-options"] as string), "the options header is printable ASCII");
  assert.equal(JSON.parse(s!.headers["brain-tool-options"] as string), { prefix: "customer:", note: "Grüße ✓" });
  assert.equal(started.data.placement, lookup.placement);
  // {"status":"ok","value":...} is business data here: it is the value, not an Outcome envelope.
  assert.equal(outcomes(all), [{ status: "ok", value: { status: "ok", value: "42!" } }]);
  assert.equal(statuses(all), ["ok"]);
});

test("ok: without a deadline there is no brain-deadline-at; an empty 2xx body is null; no options is {}", async () => {
  const ping = plainTool("ping", `${origin}/ping`);
  respond = (_, res) => res.writeHead(204).end();
  const all = await turn([ping], [{ name: "ping", input: {} }]);
  assert.is(seen[0]!.headers["brain-deadline-at"], undefined);
  assert.is(seen[0]!.headers["brain-tool-options"], "{}");
  assert.equal(outcomes(all), [{ status: "ok", value: null }]);
  assert.equal(statuses(all), ["ok"]);
});

test("non-2xx answers are error/tool_error with the status and a bounded excerpt; 5xx and 429 are retryable; redirects are not followed", async () => {
  respond = (s, res) => {
    const kind = s.url.slice(1);
    if (kind === "missing") res.writeHead(404, { "content-type": "text/plain" }).end("no such record " + "x".repeat(5000));
    else if (kind === "broken") json(res, 500, { message: "database down" });
    else if (kind === "busy") res.writeHead(429).end();
    else res.writeHead(302, { location: `${origin}/elsewhere` }).end();
  };
  const tools = ["missing", "broken", "busy", "moved"].map((n) => plainTool(n, `${origin}/${n}`));
  const all = await turn(tools, tools.map((t) => ({ name: t.contract.name, input: {} })));
  const r = resultsByTool(all);
  const missing = r.missing!.error;
  assert.is(missing.code, "tool_error");
  assert.is(missing.retryable, false);
  assert.ok(missing.message.startsWith(`HTTP 404 from ${origin}/missing: no such record xxx`), missing.message);
  assert.ok(missing.message.length < 400, "the message holds only the start of the body");
  assert.equal(missing.details, { status: 404, body: ("no such record " + "x".repeat(5000)).slice(0, 1000) });
  assert.is(r.broken!.error.message, `HTTP 500 from ${origin}/broken: {"message":"database down"}`);
  assert.is(r.broken!.error.retryable, true);
  assert.is(r.busy!.error.message, `HTTP 429 from ${origin}/busy`);
  assert.is(r.busy!.error.retryable, true);
  assert.is(r.moved!.error.message, `HTTP 302 from ${origin}/moved`);
  assert.equal(seen.map((s) => s.url).sort(), ["/broken", "/busy", "/missing", "/moved"], "the redirect's target was never asked");
  assert.equal(statuses(all), ["error", "error", "error", "error"]);
});

test("a 2xx answer violating the output schema is error/invalid_output with the issues", async () => {
  const typed = plainTool("typed", `${origin}/typed`, { outputSchema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } });
  respond = (_, res) => json(res, 200, { n: "seven" });
  const all = await turn([typed], [{ name: "typed", input: {} }]);
  const [o] = outcomes(all);
  assert.is(o!.error.code, "invalid_output");
  assert.equal(o!.error.details, [{ path: "/n", message: "expected integer, got string" }]);
  assert.equal(statuses(all), ["error"]);
});

test("a 2xx answer that is not JSON is error/invalid_output with the start of the body", async () => {
  const html = plainTool("html", `${origin}/html`);
  respond = (_, res) => res.writeHead(200, { "content-type": "text/html" }).end("<html>hello</html>");
  const all = await turn([html], [{ name: "html", input: {} }]);
  const [o] = outcomes(all);
  assert.is(o!.error.code, "invalid_output");
  assert.match(o!.error.message, `HTTP 200 from ${origin}/html is not JSON`);
  assert.equal(o!.error.details, { status: 200, body: "<html>hello</html>" });
  assert.equal(statuses(all), ["error"]);
});

test("input failing the tool's input schema is error/invalid_input and nothing is sent", async () => {
  const strict = plainTool("strict", `${origin}/strict`, { inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } });
  const all = await turn([strict], [{ name: "strict", input: { id: 7 } }]);
  assert.is(seen.length, 0);
  const [o] = outcomes(all);
  assert.is(o!.error.code, "invalid_input");
  assert.equal(o!.error.details, [{ path: "/id", message: "expected string, got integer" }]);
});

test("at the call's deadline the call ends timeout and the endpoint sees its request aborted", async () => {
  respond = () => {}; // never answers
  const slow = plainTool("slow", `${origin}/slow`);
  const all = await turn([slow], [{ name: "slow", input: {}, deadlineMs: 300 }]);
  assert.equal(statuses(all), ["timeout"]);
  assert.is(seen.length, 1);
  assert.is(await abortedSoon(seen[0]!), true);
  assert.equal(outcomes(all), [], "nothing is recorded after the deadline");
});

test("cancelling the call ends it cancelled and aborts its request", async () => {
  respond = () => {};
  const slow = plainTool("slow", `${origin}/slow`);
  const s = await createSession(brain, [slow], [{ toolCalls: [{ name: "slow", input: {} }] }, { text: "done" }]);
  assert.is((await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go" })).status, 202);
  const started = await waitFor(brain, s.id, (r) => r.type === "tool.call_started");
  const callId = ofType(started, "tool.call_started")[0]!.data.callId;
  for (let i = 0; seen.length === 0 && i < 200; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal((await api(brain, "POST", `/v1/sessions/${s.id}/cancel`, { callId })).body, { cancelled: [callId] });
  assert.is(await abortedSoon(seen[0]!), true);
  const all = await waitFor(brain, s.id, (r) => r.type === "turn.completed");
  assert.equal(statuses(all), ["cancelled"]);
});

test("connection refused (nothing was sent) is error/tool_error, retryable", async () => {
  const down = plainTool("down", `${closedOrigin}/down`);
  const all = await turn([down], [{ name: "down", input: {} }]);
  const [o] = outcomes(all);
  assert.is(o!.error.code, "tool_error");
  assert.is(o!.error.retryable, true);
  assert.match(o!.error.message, new RegExp(`the plain HTTP tool at ${closedOrigin}/down could not be reached: .*ECONNREFUSED`));
  assert.equal(statuses(all), ["error"]);
});

test("a connection lost after the endpoint got the request ends the call unknown (never re-sent)", async () => {
  respond = (_, res) => res.socket!.destroy();
  const flaky = plainTool("flaky", `${origin}/flaky`);
  const all = await turn([flaky], [{ name: "flaky", input: {} }]);
  const f = finishedByTool(all).flaky!;
  assert.is(f.status, "unknown");
  assert.match(f.message!, `the connection to the plain HTTP tool at ${origin}/flaky failed after the request may have reached it`);
  assert.equal(outcomes(all), []);
  assert.is(seen.length, 1);
});

test("session creation: an origin the operator does not allow is 403 forbidden; credentials in the URL and oversized options are 400 invalid_request", async () => {
  const far = await refused(plainTool("far", "https://elsewhere.example/tool"));
  assert.is(far.status, 403);
  assert.is(far.error.code, "forbidden");
  assert.match(far.error.message, "this server does not call HTTP tools at https://elsewhere.example (the operator allows origins with BRAIN_HTTP_TOOL_ORIGINS)");
  const creds = await refused(plainTool("creds", `${origin.replace("http://", "http://user:pw@")}/tool`));
  assert.is(creds.status, 400);
  assert.is(creds.error.code, "invalid_request");
  assert.match(creds.error.message, "may not carry credentials");
  const big = await refused(plainTool("big", `${origin}/tool`, { options: { blob: "é".repeat(2000) } }));
  assert.is(big.status, 400);
  assert.is(big.error.code, "invalid_request");
  assert.match(big.error.message, "brain-tool-options header, which may be at most 8192 bytes");
  assert.is(seen.length, 0);
});

test("a runtime stopping with a call open aborts the request and recovery ends it unknown, never re-sent", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-http-plain-restart-"));
  respond = () => {};
  const slow = plainTool("slow", `${origin}/slow`);
  let own = await startBrain({ dataDir: dir, port: 0, httpToolOrigins: [origin] });
  try {
    const s = await createSession(own, [slow], [{ toolCalls: [{ name: "slow", input: {} }] }, { text: "done" }]);
    assert.is((await api(own, "POST", `/v1/sessions/${s.id}/messages`, { text: "go" })).status, 202);
    for (let i = 0; seen.length === 0 && i < 300; i++) await new Promise((r) => setTimeout(r, 10));
    await own.close();
    assert.is(await abortedSoon(seen[0]!), true);
    own = await startBrain({ dataDir: dir, port: 0, httpToolOrigins: [origin] });
    const all = await records(own, s.id);
    assert.equal(statuses(all), ["unknown"]);
    assert.is(seen.length, 1);
    assertJournal(all);
  } finally {
    await own.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
