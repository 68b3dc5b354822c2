// Descriptor tools end to end: a real local HTTP server stands in for the API, the runtime defines
// `github` as an http_json environment pointing at it, sessions are created over real HTTP with
// descriptor placements, and the scripted model calls them.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createServer } from "node:http";
import type { IncomingHttpHeaders, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { validate } from "@aexhq/brain-protocol";
import type { JournalRecord, PlacedTool, ToolContract } from "@aexhq/brain-protocol";
import { refusedServe } from "./helpers/cli.ts";
import { api, assertJournal, createSession, memoryBrain, ofType, records, waitFor } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contractDigest, startBrain } from "../src/index.ts";
import { configFromEnv } from "../src/config.ts";

const SECRET = "Bearer operator-secret-0001";

/** One request the API server received. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Resolves true when the client went away before the server answered. */
  aborted: Promise<boolean>;
}

let seen: Seen[] = [];
/** How the API answers the current test's requests; by default it echoes what it saw. */
let respond: (s: Seen, res: ServerResponse) => void;
const echo = (s: Seen, res: ServerResponse) => json(res, 200, { method: s.method, url: s.url, body: s.body === "" ? null : JSON.parse(s.body) });

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
}

let apiServer: Server;
let apiUrl: string;
let closedPort: number;
let brain: Brain;

test.before(async () => {
  apiServer = createServer((req, res) => {
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
  await new Promise<void>((r) => apiServer.listen(0, "127.0.0.1", r));
  apiUrl = `http://127.0.0.1:${(apiServer.address() as AddressInfo).port}`;
  // A port nobody listens on, for the network failure.
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));
  brain = await memoryBrain({
    descriptorEnvironments: {
      // A path prefix, so a path that climbs out of it has somewhere to go.
      github: { type: "http_json", baseUrl: `${apiUrl}/api/v3`, headers: { authorization: SECRET, "x-github-api-version": "2022-11-28" } },
      offline: { type: "http_json", baseUrl: `http://127.0.0.1:${closedPort}` },
    },
  });
});

test.before.each(() => {
  seen = [];
  respond = echo;
});

test.after(async () => {
  await brain?.close();
  apiServer?.closeAllConnections();
  await new Promise((r) => apiServer?.close(r));
});

function descriptorTool(name: string, descriptor: unknown, inputSchema: Record<string, unknown>, opts: { outputSchema?: Record<string, unknown>; env?: string } = {}): PlacedTool {
  const c = { name, description: `the ${name} tool`, inputSchema, ...(opts.outputSchema ? { outputSchema: opts.outputSchema } : {}) };
  const contract: ToolContract = { ...c, digest: contractDigest(c) };
  return { contract, options: {}, placement: { kind: "descriptor", env: opts.env ?? "github", descriptor: descriptor as never } };
}

const issueInput = {
  type: "object",
  properties: { owner: { type: "string" }, repo: { type: "string" }, number: { type: "integer" }, state: { type: "string" }, labels: { type: "array", items: { type: "string" } } },
  required: ["owner", "repo", "number"],
};
const getIssue = descriptorTool("get_issue", { type: "http_json", method: "GET", path: "/repos/{owner}/{repo}/issues/{number}" }, issueInput);

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
const abortedSoon = (s: Seen) => Promise.race([s.aborted, new Promise<boolean>((r) => setTimeout(() => r(false), 3000))]);

const outcomes = (all: JournalRecord[]) => ofType(all, "tool.result").map((r) => r.data.outcome as { status: string; value?: any; error?: any });
const statuses = (all: JournalRecord[]) => ofType(all, "tool.finished").map((r) => r.data.status);

async function refused(tool: PlacedTool): Promise<{ status: number; error: { code: string; message: string; details?: any } }> {
  const r = await api(brain, "POST", "/v1/sessions", { model: { provider: "scripted", script: [{ text: "unused" }] }, tools: [tool] });
  assert.ok(validate.ErrorBody.Check(r.body), `ErrorBody: ${JSON.stringify(r.body)}`);
  return { status: r.status, error: r.body.error };
}

test("GET fills the path placeholders from the input and sends the other fields as the query string", async () => {
  const all = await turn([getIssue], [{ name: "get_issue", input: { owner: "aexhq", repo: "brain", number: 7, state: "open", labels: ["bug", "ui"] } }]);
  assert.is(seen.length, 1);
  assert.is(seen[0]!.method, "GET");
  assert.is(seen[0]!.url, "/api/v3/repos/aexhq/brain/issues/7?state=open&labels=bug&labels=ui");
  assert.is(seen[0]!.body, "");
  assert.equal(statuses(all), ["ok"]);
  assert.equal(outcomes(all), [{ status: "ok", value: { method: "GET", url: "/api/v3/repos/aexhq/brain/issues/7?state=open&labels=bug&labels=ui", body: null } }]);
  const started = ofType(all, "tool.call_started")[0]!;
  assert.equal(started.data.placement, getIssue.placement, "the journal keeps the descriptor as placed");
});

test("POST sends the input fields not in the path as a JSON body", async () => {
  const comment = descriptorTool("comment", { type: "http_json", method: "POST", path: "/repos/{repo}/issues/{number}/comments" }, {
    type: "object",
    properties: { repo: { type: "string" }, number: { type: "integer" }, body: { type: "string" }, meta: { type: "object" } },
  });
  const all = await turn([comment], [{ name: "comment", input: { repo: "brain", number: 3, body: "LGTM", meta: { draft: false } } }]);
  assert.is(seen.length, 1);
  assert.is(seen[0]!.method, "POST");
  assert.is(seen[0]!.url, "/api/v3/repos/brain/issues/3/comments");
  assert.is(seen[0]!.headers["content-type"], "application/json");
  assert.equal(JSON.parse(seen[0]!.body), { body: "LGTM", meta: { draft: false } });
  assert.equal(outcomes(all), [{ status: "ok", value: { method: "POST", url: "/api/v3/repos/brain/issues/3/comments", body: { body: "LGTM", meta: { draft: false } } } }]);
});

test("the environment's configured headers arrive with accept: application/json; the application cannot set headers", async () => {
  const withAuthField = descriptorTool("search", { type: "http_json", method: "GET", path: "/search" }, { type: "object", properties: { authorization: { type: "string" } } });
  await turn([withAuthField], [{ name: "search", input: { authorization: "Bearer from-the-model" } }]);
  assert.is(seen.length, 1);
  const h = seen[0]!.headers;
  assert.is(h.authorization, SECRET);
  assert.is(h["x-github-api-version"], "2022-11-28");
  assert.is(h.accept, "application/json");
  // An input field of that name is only query data.
  assert.is(seen[0]!.url, "/api/v3/search?authorization=Bearer+from-the-model");
  // Nor can the descriptor carry headers: only type, method and path.
  const r = await refused(descriptorTool("search", { type: "http_json", method: "GET", path: "/search", headers: { authorization: "x" } }, { type: "object" }));
  assert.is(r.status, 400);
  assert.is(r.error.code, "invalid_request");
  assert.match(r.error.message, /tool search: .*"headers".*only type, method and path/);
});

test("placeholder values are encoded into one segment: '/', '?', '#' and spaces cannot change the path", async () => {
  const all = await turn([getIssue], [{ name: "get_issue", input: { owner: "a/b?c#d e", repo: "..x", number: 1 } }]);
  assert.is(seen.length, 1);
  assert.is(seen[0]!.url, "/api/v3/repos/a%2Fb%3Fc%23d%20e/..x/issues/1");
  assert.equal(statuses(all), ["ok"]);
});

test("a placeholder value that would be a . or .. segment is error/invalid_input and nothing is sent", async () => {
  const all = await turn([getIssue], [{ name: "get_issue", input: { owner: "..", repo: "..", number: 1 } }]);
  assert.is(seen.length, 0);
  const [o] = outcomes(all);
  assert.is(o!.error.code, "invalid_input");
  assert.match(o!.error.message, /would climb the path/);
});

test("a 2xx answer that fails the output schema is error/invalid_output; non-JSON is invalid_output; 204 is ok null", async () => {
  const issue = descriptorTool("issue", { type: "http_json", method: "GET", path: "/issue" }, { type: "object" }, {
    outputSchema: { anyOf: [{ type: "object", properties: { title: { type: "string" } }, required: ["title"] }, { type: "null" }] },
  });
  respond = (_, res) => json(res, 200, { title: 42 });
  let [o] = outcomes(await turn([issue], [{ name: "issue", input: {} }]));
  assert.is(o!.error.code, "invalid_output");
  assert.ok(Array.isArray(o!.error.details) && o!.error.details.length > 0, "the schema issues are in details");
  respond = (_, res) => res.writeHead(200, { "content-type": "text/html" }).end("<html>hi</html>");
  [o] = outcomes(await turn([issue], [{ name: "issue", input: {} }]));
  assert.is(o!.error.code, "invalid_output");
  assert.match(o!.error.message, /HTTP 200 from github is not JSON/);
  respond = (_, res) => res.writeHead(204).end();
  const all = await turn([issue], [{ name: "issue", input: {} }]);
  assert.equal(outcomes(all), [{ status: "ok", value: null }]);
  respond = (_, res) => json(res, 200, { title: "fine" });
  assert.equal(outcomes(await turn([issue], [{ name: "issue", input: {} }])), [{ status: "ok", value: { title: "fine" } }]);
});

test("a non-2xx answer is error/tool_error with the status, the body's first 1000 characters, and retryable for 5xx and 429", async () => {
  const long = "x".repeat(3000);
  const codes: Record<string, number> = { "/a": 404, "/b": 503, "/c": 429, "/d": 302 };
  respond = (s, res) => res.writeHead(codes[s.url.slice("/api/v3".length)]!, { location: "http://elsewhere.invalid/" }).end(long);
  const tools = ["a", "b", "c", "d"].map((n) => descriptorTool(n, { type: "http_json", method: "DELETE", path: `/${n}` }, { type: "object" }));
  const all = await turn(tools, tools.map((t) => ({ name: t.contract.name, input: {} })));
  const byName = new Map(ofType(all, "tool.call_started").map((r) => [r.data.callId, r.data.tool]));
  const errors = Object.fromEntries(ofType(all, "tool.result").map((r) => [byName.get(r.data.callId), (r.data.outcome as { error: any }).error]));
  assert.equal(errors.a, { code: "tool_error", message: "HTTP 404 from github", retryable: false, details: { status: 404, body: "x".repeat(1000) } });
  assert.is(errors.b.retryable, true);
  assert.is(errors.c.retryable, true);
  // A redirect is not followed: it could carry the environment's headers elsewhere.
  assert.is(errors.d.message, "HTTP 302 from github");
  assert.is(seen.length, 4);
});

test("input failing the tool's input schema is error/invalid_input with the issues, and the API receives nothing", async () => {
  const all = await turn([getIssue], [{ name: "get_issue", input: { owner: "aexhq", repo: "brain", number: "seven" } }]);
  assert.is(seen.length, 0);
  const [o] = outcomes(all);
  assert.is(o!.error.code, "invalid_input");
  assert.equal(o!.error.details, [{ path: "/number", message: "expected integer, got string" }]);
  assert.equal(statuses(all), ["error"]);
});

test("at the call's deadline the call ends timeout and the API server sees the request aborted", async () => {
  respond = () => {}; // never answers
  const all = await turn([getIssue], [{ name: "get_issue", input: { owner: "o", repo: "r", number: 1 }, deadlineMs: 300 }]);
  assert.equal(statuses(all), ["timeout"]);
  assert.is(seen.length, 1);
  assert.is(await abortedSoon(seen[0]!), true);
  assert.equal(outcomes(all), [], "nothing is recorded after the deadline");
});

test("cancelling the call aborts its request", async () => {
  respond = () => {};
  const s = await createSession(brain, [getIssue], [{ toolCalls: [{ name: "get_issue", input: { owner: "o", repo: "r", number: 2 } }] }, { text: "done" }]);
  assert.is((await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go" })).status, 202);
  const started = await waitFor(brain, s.id, (r) => r.type === "tool.call_started");
  const callId = ofType(started, "tool.call_started")[0]!.data.callId;
  for (let i = 0; seen.length === 0 && i < 200; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal((await api(brain, "POST", `/v1/sessions/${s.id}/cancel`, { callId })).body, { cancelled: [callId] });
  assert.is(await abortedSoon(seen[0]!), true);
  const all = await waitFor(brain, s.id, (r) => r.type === "turn.completed");
  assert.equal(statuses(all), ["cancelled"]);
});

test("a descriptor path that climbs out of the base URL's path is error/forbidden and nothing is sent", async () => {
  const escape = descriptorTool("escape", { type: "http_json", method: "GET", path: "/repos/../../admin/{id}" }, { type: "object", properties: { id: { type: "string" } } });
  const inside = descriptorTool("inside", { type: "http_json", method: "GET", path: "/repos/../users/{id}" }, { type: "object", properties: { id: { type: "string" } } });
  const all = await turn([escape, inside], [{ name: "escape", input: { id: "1" } }, { name: "inside", input: { id: "2" } }]);
  const byName = new Map(ofType(all, "tool.call_started").map((r) => [r.data.callId, r.data.tool]));
  const out = Object.fromEntries(ofType(all, "tool.result").map((r) => [byName.get(r.data.callId), r.data.outcome as { status: string; error?: any }]));
  assert.is(out.escape!.error.code, "forbidden");
  assert.match(out.escape!.error.message, /resolves outside environment github's base URL/);
  assert.not.match(out.escape!.error.message, apiUrl, "the base URL is not revealed");
  assert.is(out.inside!.status, "ok", "a .. that stays under the base path is fine");
  assert.equal(seen.map((s) => s.url), ["/api/v3/users/2"]);
});

test("a network failure is error/tool_error with the failure's message", async () => {
  const down = descriptorTool("down", { type: "http_json", method: "GET", path: "/x" }, { type: "object" }, { env: "offline" });
  const [o] = outcomes(await turn([down], [{ name: "down", input: {} }]));
  assert.is(o!.error.code, "tool_error");
  assert.match(o!.error.message, /GET request to environment offline failed: .*ECONNREFUSED/);
});

test("session creation refuses an environment the server does not define: 400 unsupported naming only the requested one", async () => {
  const r = await refused(descriptorTool("get_issue", { type: "http_json", method: "GET", path: "/x" }, { type: "object" }, { env: "gitlab" }));
  assert.is(r.status, 400);
  assert.is(r.error.code, "unsupported");
  assert.match(r.error.message, /descriptor environment "gitlab" \(tool get_issue\)/);
  assert.not.match(JSON.stringify(r.error), /github|offline/, "the defined names are not revealed");
  assert.equal(r.error.details, { tool: "get_issue", env: "gitlab" });
});

test("session creation refuses a descriptor type the environment does not interpret: 400 unsupported", async () => {
  const r = await refused(descriptorTool("query", { type: "graphql", query: "{ viewer { login } }" }, { type: "object" }));
  assert.is(r.status, 400);
  assert.is(r.error.code, "unsupported");
  assert.match(r.error.message, /environment github interprets "http_json" descriptors, not "graphql" \(tool query\)/);
});

test("session creation refuses a malformed http_json descriptor: 400 invalid_request naming the tool", async () => {
  const props = { type: "object", properties: { number: { type: "integer" } } };
  const cases: Array<[string, unknown, RegExp]> = [
    ["a method outside GET/POST/PUT/PATCH/DELETE", { type: "http_json", method: "TRACE", path: "/x" }, /method "TRACE": use one of GET, POST, PUT, PATCH, DELETE/],
    ["a path not starting with /", { type: "http_json", method: "GET", path: "repos/{number}" }, /path "repos\/\{number\}": it must be a string starting with "\/"/],
    ["a placeholder that is not an input property", { type: "http_json", method: "GET", path: "/issues/{id}" }, /placeholder \{id\}, which is not a property of the tool's input schema/],
    ["an unmatched brace", { type: "http_json", method: "GET", path: "/issues/{number" }, /unmatched "\{" or "\}"/],
    ["a query string in the path", { type: "http_json", method: "GET", path: "/issues?state=open" }, /with "\?" or "#"/],
    ["an extra key", { type: "http_json", method: "GET", path: "/x", timeout: 5 }, /has key "timeout"/],
    ["a descriptor that is not an object with a type", "GET /x", /must be an object with a string "type"/],
  ];
  for (const [what, descriptor, message] of cases) {
    const r = await refused(descriptorTool("lookup_issue", descriptor, props));
    assert.is(r.status, 400, what);
    assert.is(r.error.code, "invalid_request", what);
    assert.match(r.error.message, /^tool lookup_issue: /, what);
    assert.match(r.error.message, message, what);
  }
  assert.is(seen.length, 0);
});

test("startBrain rejects a bad descriptorEnvironments entry, naming it without echoing its values", async () => {
  const cases: Array<[unknown, RegExp]> = [
    [{ github: { type: "http_json", baseUrl: "ftp://files.example" } }, /descriptorEnvironments\.github\.baseUrl must be an http: or https: URL/],
    [{ github: { type: "http_json", baseUrl: "https://user:pw@api.example" } }, /descriptorEnvironments\.github\.baseUrl must be/],
    [{ github: { type: "http_json", baseUrl: "https://api.example", headers: { "bad header": SECRET } } }, /descriptorEnvironments\.github\.headers must map/],
    [{ github: { type: "http_json", baseUrl: "https://api.example", header: {} } }, /descriptorEnvironments\.github must have only type, baseUrl and headers, got "header"/],
    [{ github: { type: "soap", baseUrl: "https://api.example" } }, /descriptorEnvironments\.github\.type must be "http_json"/],
    [{ "bad name!": { type: "http_json", baseUrl: "https://api.example" } }, /descriptorEnvironments must name environments/],
  ];
  for (const [defs, message] of cases) {
    const e = await startBrain({ dataDir: ":memory:", port: 0, descriptorEnvironments: defs as never }).then(
      (b) => b.close().then(() => undefined),
      (err: Error) => err,
    );
    assert.instance(e, Error, JSON.stringify(defs));
    assert.match(e!.message, message);
    assert.not.match(e!.message, /operator-secret|pw@/);
  }
});

test("BRAIN_HTTP_ENVIRONMENTS becomes the CLI's descriptorEnvironments", () => {
  const defs = { github: { type: "http_json", baseUrl: "https://api.github.com", headers: { authorization: SECRET } } };
  const opts = configFromEnv({ BRAIN_TOKEN: "t0ken-t0ken-t0ken", BRAIN_JOURNAL: "memory", BRAIN_HTTP_ENVIRONMENTS: JSON.stringify(defs) });
  assert.equal(opts.descriptorEnvironments, defs);
  assert.is(configFromEnv({ BRAIN_TOKEN: "t0ken-t0ken-t0ken", BRAIN_JOURNAL: "memory" }).descriptorEnvironments, undefined);
});

test("the CLI refuses a malformed BRAIN_HTTP_ENVIRONMENTS before it listens, without echoing it", async () => {
  const values: Array<[string, RegExp]> = [
    [`{"github": {"type": "http_json", "baseUrl": "${SECRET}"`, /BRAIN_HTTP_ENVIRONMENTS must be a JSON object; it is not valid JSON/],
    [`["github"]`, /BRAIN_HTTP_ENVIRONMENTS must be an object mapping environment names/],
    [JSON.stringify({ github: { type: "http_json", baseUrl: "not a url", headers: { authorization: SECRET } } }), /BRAIN_HTTP_ENVIRONMENTS\.github\.baseUrl must be/],
  ];
  for (const [value, message] of values) {
    const { code, out } = await refusedServe({ BRAIN_HTTP_ENVIRONMENTS: value });
    assert.is(code, 1, `${value}: ${out}`);
    assert.match(out, message);
    assert.not.match(out, "operator-secret");
    assert.not.match(out, "brain listening");
  }
});

test.run();
