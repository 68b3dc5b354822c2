// Issue 16, item 1: bad input meets a limit (a typed 4xx or error frame naming it), never a stack
// overflow or a 500, and a failed request creates nothing. Real HTTP, WebSocket and SQLite.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { request } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { LIMITS, validate } from "@aexhq/brain-protocol";
import { startBrain } from "../src/index.ts";
import type { SqliteStore } from "../src/journal/sqlite.ts";
import { checkJsonTextDepth, jsonTextDepth, jsonValueDepth } from "../src/json-limits.ts";
import { toolArguments } from "../src/models/http-failure.ts";
import { checkGuestOutcome } from "../src/environments/component/outcome.ts";
import { validateSchema } from "../src/environments/json-schema.ts";
import { api, createSession, records, assertJournal } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost, invalidFrames } from "./helpers/host.ts";

const MAX = LIMITS.maxJsonDepth;
let brain: Brain;
let host: TestHost;
let dir: string;
const echo = contract("echo");
const scripted = (script: unknown[] = [{ text: "hello" }]) => ({ provider: "scripted", script });

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), "brain-limits-"));
  brain = await startBrain({ dataDir: dir, port: 0, models: {} });
  host = await TestHost.register(brain, [echo]);
});
test.after(async () => {
  await host.close();
  await brain.close();
  rmSync(dir, { recursive: true, force: true });
});

/** JSON text of arrays nested `depth` deep around `leaf` (built as text: no recursion anywhere). */
const nestedArrays = (depth: number, leaf = "1") => "[".repeat(depth) + leaf + "]".repeat(depth);
/** JSON text of objects nested `depth` deep: {"a":{"a":...}}. */
const nestedObjects = (depth: number) => '{"a":'.repeat(depth - 1) + "{}" + "}".repeat(depth - 1);

function isErrorBody(r: { body: unknown }, code: string) {
  assert.ok(validate.ErrorBody.Check(r.body), `ErrorBody: ${JSON.stringify(r.body)}`);
  assert.is((r.body as { error: { code: string } }).error.code, code);
}

/** What a refused creation must leave as it was: resident sessions, journal sessions and records, the list, the host's placements. */
async function footprint() {
  const list = await api(brain, "GET", "/v1/sessions?limit=1000");
  assert.is(list.status, 200, "GET /v1/sessions keeps answering 200");
  assert.is(list.body.next, undefined, "one page holds every session");
  const hostInfo = await api(brain, "GET", `/v1/hosts/${host.hostId}`);
  assert.is(hostInfo.status, 200);
  const { store, sessions } = brain.internals;
  await store.flush();
  return {
    listed: list.body.sessions.length,
    placed: hostInfo.body.sessions.length,
    resident: sessions.held.resident,
    journaled: (store as SqliteStore).sessionIds().length,
    records: store.stats.records,
  };
}

/** A create body whose first tool's `options` (or other field) is the given JSON text. */
function createBody(optionsJson: string, script = '[{"text":"hi"}]'): string {
  const tool = JSON.stringify({ ...placed(echo, host.hostId), options: "__OPTIONS__" }).replace('"__OPTIONS__"', optionsJson);
  return `{"model":{"provider":"scripted","script":${script}},"tools":[${tool}]}`;
}

test("json-limits: text depth counts brackets outside strings, in one pass, and stops past the limit", () => {
  assert.is(jsonTextDepth("1"), 0);
  assert.is(jsonTextDepth("[]"), 1);
  assert.is(jsonTextDepth('{"a":[1,{"b":[]}]}'), 4);
  assert.is(jsonTextDepth('["[[[[", "\\"[[[", {"k\\\\":"]]]"}]'), 2, "brackets in strings and escaped quotes do not count");
  assert.is(jsonTextDepth(nestedArrays(1_000_000)), 1_000_000, "a million levels, no recursion");
  assert.is(jsonTextDepth(nestedArrays(1000), 10), 11, "stops once past the limit");
  assert.is(checkJsonTextDepth(nestedArrays(MAX), "x"), undefined);
  assert.match(checkJsonTextDepth(nestedArrays(MAX + 1), "the body")!, new RegExp(`^the body nests arrays/objects deeper than maxJsonDepth \\(${MAX}\\)$`));
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = { a: [deep] };
  assert.is(jsonValueDepth(deep, 500), 501);
  assert.is(jsonValueDepth({ a: [1, { b: {} }], c: "x" }), 4);
});

test("tool options nested 3,000 deep (arrays) and 500 deep (objects) are 400 invalid_request naming maxJsonDepth; nothing is created", async () => {
  const before = await footprint();
  for (const options of [nestedArrays(3000), nestedObjects(500), nestedArrays(MAX)]) {
    const r = await api(brain, "POST", "/v1/sessions", undefined, { raw: createBody(options) });
    assert.is(r.status, 400);
    isErrorBody(r, "invalid_request");
    assert.match(r.body.error.message, /request body nests arrays\/objects deeper than maxJsonDepth \(128\)/);
    assert.equal(r.body.error.details, { limit: "maxJsonDepth", max: MAX });
  }
  assert.equal(await footprint(), before);
});

test("a body nested exactly maxJsonDepth deep is accepted; one level more is refused", async () => {
  // The body itself is 3 levels ({ tools: [ { options: ... } ] }) above the options value.
  const fits = await api(brain, "POST", "/v1/sessions", undefined, { raw: createBody(nestedArrays(MAX - 3)) });
  assert.is(fits.status, 201, JSON.stringify(fits.body).slice(0, 300));
  const over = await api(brain, "POST", "/v1/sessions", undefined, { raw: createBody(nestedArrays(MAX - 2)) });
  assert.is(over.status, 400);
  isErrorBody(over, "invalid_request");
  assert.is((await api(brain, "GET", "/v1/sessions")).status, 200);
  assertJournal(await records(brain, fits.body.id));
});

test("a script step's tool input nested 3,000 deep is 400 invalid_request; so are a message and a cancel body", async () => {
  const before = await footprint();
  const script = `[{"toolCalls":[{"name":"echo","input":{"x":${nestedArrays(3000)}}}]}]`;
  const r = await api(brain, "POST", "/v1/sessions", undefined, { raw: createBody("{}", script) });
  assert.is(r.status, 400);
  isErrorBody(r, "invalid_request");
  assert.match(r.body.error.message, /maxJsonDepth/);
  assert.equal(await footprint(), before);
  const s = await createSession(brain, [], [{ text: "ok" }]);
  const msg = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, undefined, { raw: `{"text":"hi","x":${nestedArrays(3000)}}` });
  assert.is(msg.status, 400);
  isErrorBody(msg, "invalid_request");
  const cancel = await api(brain, "POST", `/v1/sessions/${s.id}/cancel`, undefined, { raw: nestedObjects(3000) });
  assert.is(cancel.status, 400);
  isErrorBody(cancel, "invalid_request");
  assert.equal((await records(brain, s.id)).map((x) => x.type), ["session.created"], "the refused message appended nothing");
});

test("host channel: an emit whose data is nested 3,000 deep gets an error frame invalid_frame with its ref; nothing is committed and the call goes on", async () => {
  const s = await createSession(brain, [placed(echo, host.hostId)], [{ toolCalls: [{ name: "echo", input: {} }] }, { text: "done" }]);
  await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go" });
  const invoke = await host.invoke();
  const ref = host.nextRef();
  host.sendRaw(`{"type":"emit","ref":${ref},"callId":${JSON.stringify(invoke.callId)},"kind":"deep","data":${nestedArrays(3000)}}`);
  const err = await host.next((f) => f.type === "error" && f.ref === ref);
  assert.equal(err, { type: "error", ref, error: { code: "invalid_frame", message: `frame nests arrays/objects deeper than maxJsonDepth (${MAX})`, details: { limit: "maxJsonDepth", max: MAX } } });
  // Without a usable ref the error frame still names the limit.
  host.sendRaw(nestedObjects(5000));
  const bare = await host.next((f) => f.type === "error" && f.ref === undefined);
  assert.is(bare.type === "error" && bare.error.code, "invalid_frame");
  const ok = await host.request({ type: "emit", callId: invoke.callId, kind: "fine", data: JSON.parse(nestedArrays(50)) });
  assert.is(ok.type, "committed");
  assert.is((await host.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value: 1 } })).type, "committed");
  const all = await records(brain, s.id);
  assert.equal(all.filter((r) => r.type === "tool.event").map((r) => (r.data as { kind: string }).kind), ["fine"], "the deep emit committed nothing");
  assertJournal(all);
  assert.equal(invalidFrames, []);
});

test("path decoding: malformed percent-escapes are 404 not_found with an error body, never 500", async () => {
  for (const path of ["/v1/sessions/%FF%FE", "/v1/sessions/%E0%A4%A/events", "/v1/hosts/%", "/v1/sessions/%/messages", "/v1/components/%ZZ", "/v1/calls/%C0%80/http"]) {
    const method = path.endsWith("/messages") || path.endsWith("/http") ? "POST" : "GET";
    const r = await api(brain, method, path, method === "POST" ? { text: "x" } : undefined);
    assert.ok(r.status === 404 || r.status === 400 || r.status === 401, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    assert.ok(validate.ErrorBody.Check(r.body), `${path}: ${JSON.stringify(r.body)}`);
    if (r.status === 404) assert.match(r.body.error.message, /not valid percent-encoded UTF-8|no /);
  }
  const s = await api(brain, "GET", "/v1/sessions/%FF%FE");
  assert.is(s.status, 404);
  isErrorBody(s, "not_found");
  assert.match(s.body.error.message, /not valid percent-encoded UTF-8/);
  assert.is((await api(brain, "GET", "/v1/sessions")).status, 200);
});

/** One raw HTTP request with an arbitrary request target (fetch would normalize it). */
function rawGet(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(brain.url);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method: "GET", headers: { authorization: `Bearer ${brain.token}`, ...headers } }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {}
        resolve({ status: res.statusCode!, body });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

test("odd request targets: GET /// and //host/path with a valid token are 404, not 500 and not another route", async () => {
  for (const target of ["///", "//", "//evil.example/v1/sessions", "/v1//sessions", "*"]) {
    const r = await rawGet(target);
    assert.is(r.status, 404, `${target}: ${r.status} ${JSON.stringify(r.body)}`);
    isErrorBody(r, "not_found");
  }
  assert.is((await rawGet("/v1/sessions")).status, 200);
});

test("a WebSocket upgrade to an odd path (///) is refused 404 and the server stays up", async () => {
  const ws = new WebSocket(brain.url.replace(/^http/, "ws") + "///");
  const status = await new Promise<number>((resolve) => {
    ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    ws.on("error", () => resolve(-1));
  });
  assert.ok(status === 404 || status === -1, `status ${status}`);
  assert.is((await api(brain, "GET", "/v1/sessions")).status, 200);
});

test("session creation is all or nothing: a later tool's refused admission leaves no session in memory, on any host or in the journal", async () => {
  const other = await TestHost.register(brain, [contract("other")]);
  await other.close();
  const before = await footprint();
  const r = await api(brain, "POST", "/v1/sessions", { model: scripted(), tools: [placed(echo, host.hostId), placed(contract("other"), other.hostId)] });
  assert.is(r.status, 409);
  isErrorBody(r, "host_unavailable");
  assert.equal(await footprint(), before);
  const otherInfo = await api(brain, "GET", `/v1/hosts/${other.hostId}`);
  assert.equal(otherInfo.body.sessions, []);
  // And a normal session still works afterwards.
  const s = await createSession(brain, [placed(echo, host.hostId)], [{ text: "fine" }]);
  const sent = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "hi", wait: true });
  assert.is(sent.body.status, "completed");
});

test("a model's tool arguments and a component's outcome nested past the limit are invalid_output, naming it", () => {
  try {
    toolArguments("openai", "echo", nestedArrays(3000));
    assert.unreachable("deep arguments were accepted");
  } catch (e) {
    assert.is((e as { code: string }).code, "invalid_output");
    assert.match((e as Error).message, /maxJsonDepth/);
  }
  const outcome = checkGuestOutcome(`{"status":"ok","value":${nestedArrays(3000)}}`, undefined) as { status: string; error: { code: string; message: string } };
  assert.is(outcome.status, "error");
  assert.is(outcome.error.code, "invalid_output");
  assert.match(outcome.error.message, /outcome-json nests arrays\/objects deeper than maxJsonDepth/);
});

test("a tool schema's $ref with a bad percent-escape is an unresolvable $ref issue, not a thrown URIError", () => {
  assert.equal(validateSchema({ $ref: "#/%" }, 1), [{ path: "", message: "unresolvable $ref #/%" }]);
  assert.equal(validateSchema({ $ref: "#/%E0%A4%A" }, {}), [{ path: "", message: "unresolvable $ref #/%E0%A4%A" }]);
});

test.run();
