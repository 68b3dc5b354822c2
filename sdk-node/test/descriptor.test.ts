// Descriptor tools from the Node SDK: the spec's fetch_issue placed with brainEnv({ name: "github" })
// against a real embedded runtime whose operator defines `github` as an http_json environment
// pointing at a local API server; and the TypeErrors a bad placement raises at the factory call.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { startBrain } from "@aexhq/brain-runtime";
import { Brain, brainEnv, hostEnv, tool } from "../src/index.ts";
import { finished, records, results, scripted } from "./helpers/brain.mts";

const fetchIssue = tool({
  name: "fetch_issue",
  description: "Fetch one issue.",
  input: z.object({ number: z.number().int() }),
  options: z.object({ repository: z.string() }),
  implementation: ({ repository }) => ({
    type: "http_json",
    method: "GET",
    path: `/repos/${repository}/issues/{number}`,
  }),
});

test("the spec's fetch_issue placed with brainEnv({ name: 'github' }) finishes ok with the API's JSON", async () => {
  const seen: { url: string; authorization: string | undefined }[] = [];
  const api = createServer((req, res) => {
    seen.push({ url: req.url!, authorization: req.headers.authorization });
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ number: 7, title: "Descriptor tools", state: "open" }));
  });
  await new Promise<void>((r) => api.listen(0, "127.0.0.1", r));
  const runtime = await startBrain({
    dataDir: ":memory:",
    port: 0,
    descriptorEnvironments: { github: { type: "http_json", baseUrl: `http://127.0.0.1:${(api.address() as AddressInfo).port}`, headers: { authorization: "Bearer operator-token" } } },
  });
  const brain = new Brain({ url: runtime.url, token: runtime.token });
  try {
    const github = brainEnv({ name: "github" });
    const placed = fetchIssue({ env: github, repository: "aexhq/brain" });
    assert.equal(placed.descriptor, { type: "http_json", method: "GET", path: "/repos/aexhq/brain/issues/{number}" });
    const session = await brain.sessions.create({
      model: scripted({ toolCalls: [{ name: "fetch_issue", input: { number: 7 } }] }, { text: "Issue 7 is open." }),
      tools: [placed],
    });
    assert.is(await session.send("Is issue 7 open?"), "Issue 7 is open.");
    const all = await records(session);
    const started = all.find((r) => r.type === "tool.call_started")!;
    assert.equal((started.data as { placement: unknown }).placement, { kind: "descriptor", env: "github", descriptor: placed.descriptor });
    assert.equal(finished(all).map((f) => f.data.status), ["ok"]);
    assert.equal(results(all).map((r) => r.data.outcome), [{ status: "ok", value: { number: 7, title: "Descriptor tools", state: "open" } }]);
    // The credentials are the operator's: the application never had them.
    assert.equal(seen, [{ url: "/repos/aexhq/brain/issues/7", authorization: "Bearer operator-token" }]);
  } finally {
    await brain.close();
    await runtime.close();
    api.closeAllConnections();
    await new Promise((r) => api.close(r));
  }
});

test("the descriptor is computed once at the factory call and deeply frozen", () => {
  let calls = 0;
  const shared = { nested: { path: "/a" } };
  const t = tool({
    name: "frozen",
    description: "Frozen descriptor.",
    input: z.object({}),
    implementation: () => {
      calls += 1;
      return { type: "http_json", method: "GET", path: shared.nested.path, extra: shared };
    },
  });
  const placed = t({ env: brainEnv({ name: "github" }) });
  assert.is(calls, 1);
  const d = placed.descriptor as { extra: { nested: { path: string } } };
  assert.ok(Object.isFrozen(d) && Object.isFrozen(d.extra) && Object.isFrozen(d.extra.nested));
  // A copy: changing what the implementation returned does not change the placed descriptor.
  shared.nested.path = "/b";
  assert.is(d.extra.nested.path, "/a");
});

test("placing a descriptor tool without an env or in a hostEnv is a TypeError at the factory call", () => {
  assert.throws(() => fetchIssue({ repository: "aexhq/brain" }), (e: unknown) => e instanceof TypeError && /fetch_issue\(\): descriptor tools run in an Environment that interprets them: pass env: brainEnv\(\{ name \}\)/.test(e.message));
  assert.throws(() => fetchIssue({ env: hostEnv({ name: "app" }), repository: "aexhq/brain" }), (e: unknown) => e instanceof TypeError && /fetch_issue\(\): descriptor tools run in an Environment/.test(e.message));
});

test("a descriptor that is not JSON is a TypeError at the factory call naming the tool and the problem", () => {
  class Endpoint {
    path = "/x";
  }
  const cyclic: Record<string, unknown> = { type: "http_json" };
  cyclic.self = cyclic;
  const cases: Array<[string, () => unknown, RegExp]> = [
    ["undefined", () => undefined, /\/ is undefined/],
    ["a function inside", () => ({ type: "http_json", path: () => "/x" }), /\/path is a function/],
    ["a class instance", () => new Endpoint(), /instance of Endpoint/],
    ["a non-finite number", () => ({ type: "http_json", limit: Infinity }), /\/limit is Infinity/],
    ["a cycle", () => cyclic, /\/self is a cycle/],
    ["a promise (async implementation)", async () => ({ type: "http_json" }), /instance of Promise/],
  ];
  for (const [what, implementation, reason] of cases) {
    const t = tool({ name: "bad_descriptor", description: "Not JSON.", input: z.object({}), implementation });
    assert.throws(
      () => t({ env: brainEnv({ name: "github" }) }),
      (e: unknown) => e instanceof TypeError && /^bad_descriptor\(\): the descriptor implementation\(options\) returned is not JSON: /.test(e.message) && reason.test(e.message),
      what,
    );
  }
});

test("an implementation that throws is a TypeError at the factory call naming the tool, with the cause", () => {
  const boom = new Error("no repository configured");
  const t = tool({
    name: "throws",
    description: "Throws.",
    input: z.object({}),
    implementation: () => {
      throw boom;
    },
  });
  assert.throws(() => t({ env: brainEnv({ name: "github" }) }), (e: unknown) => e instanceof TypeError && e.message === "throws(): implementation(options) threw: no repository configured" && e.cause === boom);
});

test("a brainEnv with a filesystem grant on a descriptor tool is a TypeError at the factory call", () => {
  const reader = brainEnv({ name: "github", filesystem: { workspace: "read" } });
  assert.throws(() => fetchIssue({ env: reader, repository: "aexhq/brain" }), (e: unknown) => e instanceof TypeError && /fetch_issue\(\): brainEnv github grants filesystem.workspace, but grants are for component tools/.test(e.message));
});

test("npm run example:fetch-issue prints the issue and the answer", () => {
  // Run, not imported: tests may not import examples/ (docs/ARCHITECTURE.md).
  const root = new URL("../../", import.meta.url);
  const run = spawnSync(process.execPath, ["--conditions=brain-source", "--import", "tsx", "examples/fetch-issue/main.ts"], { cwd: root, encoding: "utf8", timeout: 30000 });
  assert.is(run.status, 0, run.stderr);
  assert.ok(run.stdout.includes(`result  {"status":"ok","value":{"number":7,"title":"Descriptor tools","state":"open"}}`), run.stdout);
  assert.ok(run.stdout.includes("answer  Issue 7 is open."), run.stdout);
});

test.run();
