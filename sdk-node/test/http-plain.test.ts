// The v1 plain-JSON HTTP placements from the Node SDK: a tool with only a contract placed with
// http({ url }) and one declared with httpTool(...), against a real embedded runtime and a real
// loopback endpoint that knows nothing of Brain; the TypeErrors of wrong arguments; the example.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { createServer } from "node:http";
import type { IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { startBrain } from "@aexhq/brain-runtime";
import { Brain, brainEnv, hostEnv, http, httpEnv, httpTool, tool } from "../src/index.ts";
import { finished, records, results, scripted } from "./helpers/brain.mts";

const lookup = tool({
  name: "lookup",
  description: "Look up one record.",
  input: z.object({ id: z.string() }),
  output: z.object({ value: z.string() }).nullable(),
  options: z.object({ prefix: z.string() }),
});

test("a contract-only tool placed with http({ url }) and an httpTool(...) are called end to end; the endpoint gets the input and the options", async () => {
  const seen: { url: string; body: unknown; headers: IncomingHttpHeaders }[] = [];
  const endpoint = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    seen.push({ url: req.url!, body: JSON.parse(body), headers: req.headers });
    const answer = req.url === "/lookup" ? { value: `record ${JSON.parse(req.headers["brain-tool-options"] as string).prefix}${JSON.parse(body).id}` } : { city: JSON.parse(body).city, forecast: "sunny" };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
  });
  await new Promise<void>((r) => endpoint.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`;
  const runtime = await startBrain({ dataDir: ":memory:", port: 0, httpToolOrigins: [url] });
  const brain = new Brain({ url: runtime.url, token: runtime.token });
  try {
    const weather = httpTool({
      name: "weather",
      description: "Today's weather in a city.",
      input: z.object({ city: z.string() }),
      output: z.object({ city: z.string(), forecast: z.string() }),
      url: `${url}/weather`,
    });
    const placedLookup = lookup({ env: http({ url: `${url}/lookup` }), prefix: "customer:" });
    const session = await brain.sessions.create({
      model: scripted({ toolCalls: [{ name: "lookup", input: { id: "42" } }, { name: "weather", input: { city: "London" } }] }, { text: "Found both." }),
      tools: [placedLookup, weather],
    });
    assert.is(await session.send("Who is 42, and the weather?"), "Found both.");
    const all = await records(session);
    const placements = Object.fromEntries(all.filter((r) => r.type === "tool.call_started").map((r) => [(r.data as { tool: string }).tool, (r.data as { placement: unknown }).placement]));
    assert.equal(placements, { lookup: { kind: "http_plain", url: `${url}/lookup` }, weather: { kind: "http_plain", url: `${url}/weather` } });
    assert.equal(finished(all).map((f) => f.data.status), ["ok", "ok"]);
    const byCall = new Map(all.filter((r) => r.type === "tool.call_started").map((r) => [(r.data as { callId: string }).callId, (r.data as { tool: string }).tool]));
    const values = Object.fromEntries(results(all).map((r) => [byCall.get(r.data.callId)!, r.data.outcome]));
    assert.equal(values, { lookup: { status: "ok", value: { value: "record customer:42" } }, weather: { status: "ok", value: { city: "London", forecast: "sunny" } } });
    const byUrl = Object.fromEntries(seen.map((s) => [s.url, s]));
    assert.equal(byUrl["/lookup"]!.body, { id: "42" });
    assert.is(byUrl["/lookup"]!.headers["brain-tool"], "lookup");
    assert.is(byUrl["/weather"]!.headers["brain-tool-options"], "{}");
    assert.is(byUrl["/weather"]!.headers["brain-session-id"], session.id);
    // Nothing was registered on the host connection for them: the endpoint serves them.
    assert.equal(brain.connectionCount, 0);
  } finally {
    await brain.close();
    await runtime.close();
    endpoint.closeAllConnections();
    await new Promise((r) => endpoint.close(r));
  }
});

test("an endpoint's wrong answer reaches the session as the call's error (output checked by Brain)", async () => {
  const endpoint = createServer((_, res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ value: 7 })));
  await new Promise<void>((r) => endpoint.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/lookup`;
  const runtime = await startBrain({ dataDir: ":memory:", port: 0, httpToolOrigins: [new URL(url).origin] });
  const brain = new Brain({ url: runtime.url, token: runtime.token });
  try {
    const session = await brain.sessions.create({
      model: scripted({ toolCalls: [{ name: "lookup", input: { id: "1" } }] }, { text: "done" }),
      tools: [lookup({ env: http({ url }), prefix: "p:" })],
    });
    await session.send("go");
    const [r] = results(await records(session));
    assert.is((r!.data.outcome as { error: { code: string } }).error.code, "invalid_output");
  } finally {
    await brain.close();
    await runtime.close();
    endpoint.closeAllConnections();
    await new Promise((r) => endpoint.close(r));
  }
});

test("an origin the operator does not allow refuses the session (forbidden)", async () => {
  const runtime = await startBrain({ dataDir: ":memory:", port: 0 });
  const brain = new Brain({ url: runtime.url, token: runtime.token });
  try {
    const err = await brain.sessions.create({ model: scripted({ text: "x" }), tools: [lookup({ env: http({ url: "https://legacy.example/lookup" }), prefix: "p:" })] }).catch((e) => e);
    assert.is(err.code, "forbidden");
    assert.match(err.message, "https://legacy.example");
  } finally {
    await brain.close();
    await runtime.close();
  }
});

test("wrong arguments are TypeErrors where they are written", () => {
  for (const bad of [undefined, null, "https://x.example", {}, { url: "/relative" }, { url: "ftp://x.example/" }, { url: "https://user:pw@x.example/" }]) {
    assert.throws(() => http(bad as never), TypeError, JSON.stringify(bad));
  }
  assert.equal(http({ url: "https://x.example/a?b=1" }), { kind: "http_plain", name: "https://x.example/a?b=1", url: "https://x.example/a?b=1" });
  assert.ok(Object.isFrozen(http({ url: "https://x.example/" })));

  const def = { name: "weather", description: "Weather.", input: z.object({ city: z.string() }), url: "https://x.example/weather" };
  assert.is(httpTool(def).env?.kind, "http_plain");
  assert.throws(() => httpTool(undefined as never), TypeError);
  assert.throws(() => httpTool({ ...def, url: "nope" }), /httpTool weather: http: url must be an absolute http\(s\) URL/);
  assert.throws(() => httpTool({ ...def, run: async () => null } as never), /unknown key "run"/);
  assert.throws(() => httpTool({ ...def, options: z.object({}) } as never), /unknown key "options"/);
  assert.throws(() => httpTool({ ...def, name: "bad name" }), /tool name "bad name" is invalid/);
  assert.throws(() => httpTool({ ...def, input: { type: "object" } as never }), /input must be a Zod schema/);

  // A contract-only tool has no code of its own: only a plain-JSON endpoint can serve it.
  assert.throws(() => lookup({ prefix: "p:" }), /place it with env: http\(\{ url \}\)/);
  assert.throws(() => lookup({ env: hostEnv({ name: "app" }), prefix: "p:" }), TypeError);
  assert.throws(() => lookup({ env: httpEnv({ url: "https://x.example/" }), prefix: "p:" }), TypeError);
  assert.throws(() => lookup({ env: brainEnv({ name: "b" }), prefix: "p:" }), TypeError);
  assert.throws(() => lookup({ env: http({ url: "https://x.example/" }), prefix: 3 as never }), /invalid options/);
  const descriptorTool = tool({ name: "d", description: "D.", input: z.object({}), implementation: () => ({ type: "http_json", method: "GET", path: "/" }) });
  assert.throws(() => descriptorTool({ env: http({ url: "https://x.example/" }) }), /component and descriptor implementations run in brainEnv/);
});

test("npm run example:plain-http prints both results and the answer", () => {
  // Run, not imported: tests may not import examples/ (docs/ARCHITECTURE.md).
  const root = new URL("../../", import.meta.url);
  const run = spawnSync(process.execPath, ["--conditions=brain-source", "--import", "tsx", "examples/plain-http/main.ts"], { cwd: root, encoding: "utf8", timeout: 30000 });
  assert.is(run.status, 0, run.stderr);
  assert.ok(run.stdout.includes(`result  {"status":"ok","value":{"value":"Ada Lovelace"}}`), run.stdout);
  assert.ok(run.stdout.includes(`result  {"status":"ok","value":{"city":"London","forecast":"sunny"}}`), run.stdout);
  assert.ok(run.stdout.includes("answer  Ada Lovelace; sunny in London."), run.stdout);
});

test.run();
