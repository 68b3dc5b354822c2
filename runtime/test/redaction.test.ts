// Secrets never echo (issue 16): a provider and an http_json endpoint that quote the request headers
// they received, and tools that emit the server's tokens, leave nothing secret in the journal (the
// SQLite file and its WAL, byte for byte), in HTTP answers, or in frames to hosts.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PlacedTool, ToolContract } from "@aexhq/brain-protocol";
import { startBrain, contractDigest, defaultEnvironments, stderrLogger } from "../src/index.ts";
import type { EnvironmentPlugin, Logger } from "../src/index.ts";
import { api, createSession, records, ofType } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost } from "./helpers/host.ts";

const PROVIDER_KEY = "sk-live-provider-key-0123456789abcdef";
const ENV_SECRET = "ghp_environment-header-secret-9876543210";
const OPERATOR = "operator-token-never-to-be-echoed-4242";
const HOST_SECRET = "host-secret-never-to-be-echoed-1717";

/** A server that answers every request with `status` and a JSON body quoting every header it received. */
async function echoingServer(status: () => number): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const quoted = JSON.stringify(req.headers);
      res.writeHead(status(), { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `Incorrect credentials; you sent ${quoted}` }, headers: req.headers, seen: `authorization: ${req.headers.authorization}` }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/** Every byte the journal holds on disk (database file, WAL and the log in front of them). */
function diskBytes(dir: string): string {
  return ["journal.sqlite", "journal.sqlite-wal", "journal.sqlite-log"].map((f) => join(dir, f)).filter(existsSync).map((f) => readFileSync(f).toString("latin1")).join("");
}

/** An API key created during the run (its secret is one of the server's too). */
let apiKey = "";

function assertClean(where: string, text: string): void {
  for (const secret of [PROVIDER_KEY, ENV_SECRET, OPERATOR, HOST_SECRET, ...(apiKey === "" ? [] : [apiKey])]) assert.not.ok(text.includes(secret), `${where} holds a secret (${secret.slice(0, 12)}…)`);
}

let provider: Awaited<ReturnType<typeof echoingServer>>;
let endpoint: Awaited<ReturnType<typeof echoingServer>>;
let endpointStatus = 200;
let dir: string;
let brain: Brain;
/** The run's log, as the default logger writes it (JSON lines, from debug up). */
const logLines: string[] = [];
/** The logger plugins are given (what every part of the runtime logs through). */
let pluginLogger: Logger | undefined;
const probe: EnvironmentPlugin = { name: "probe", install: (ctx) => void (pluginLogger = ctx.logger) };

test.before(async () => {
  provider = await echoingServer(() => 401);
  endpoint = await echoingServer(() => endpointStatus);
  dir = mkdtempSync(join(tmpdir(), "brain-redaction-"));
  brain = await startBrain({
    dataDir: dir,
    port: 0,
    token: OPERATOR,
    models: { openai: { baseUrl: provider.url, apiKey: PROVIDER_KEY } },
    descriptorEnvironments: { api: { type: "http_json", baseUrl: endpoint.url, headers: { authorization: `Bearer ${ENV_SECRET}` } } },
    logger: stderrLogger({ level: "debug", json: true, write: (line) => logLines.push(line) }),
    environments: [...defaultEnvironments(), probe],
  });
});

test.after(async () => {
  await brain.close();
  await provider.close();
  await endpoint.close();
  rmSync(dir, { recursive: true, force: true });
});

test("a provider quoting the Authorization header it got: the turn's error and the journal say [redacted]", async () => {
  const summarize = contract("summarize");
  const host = await TestHost.register(brain, [summarize], { hostId: "redaction-host", secret: HOST_SECRET });
  try {
    const s = await api(brain, "POST", "/v1/sessions", { model: { provider: "openai", model: "m" }, tools: [placed(summarize, host.hostId)] });
    assert.is(s.status, 201);
    const sent = await api(brain, "POST", `/v1/sessions/${s.body.id}/messages`, { text: "hi", wait: true });
    assert.is(sent.body.status, "failed");
    assert.is(sent.body.error.code, "provider_error");
    assert.is(sent.body.error.details.reason, "unauthorized");
    assert.match(sent.body.error.message, /\[redacted\]/, "the provider's quote is still there, without the key");
    assertClean("the HTTP answer", JSON.stringify(sent.body));
    const events = JSON.stringify(await records(brain, s.body.id, 0, { expand: true }));
    assert.match(events, /\[redacted\]/);
    assertClean("the events", events);

  } finally {
    await host.close();
  }
});

test("an http_json endpoint echoing the environment's headers, in a result and in an error: journaled [redacted]", async () => {
  const c = { name: "whoami", description: "the whoami tool", inputSchema: { type: "object" } };
  const contract_: ToolContract = { ...c, digest: contractDigest(c) };
  const tool: PlacedTool = { contract: contract_, options: {}, placement: { kind: "descriptor", env: "api", descriptor: { type: "http_json", method: "GET", path: "/me" } as never } };
  for (const status of [200, 500]) {
    endpointStatus = status;
    const s = await createSession(brain, [tool], [{ toolCalls: [{ name: "whoami", input: {} }] }, { text: "done" }]);
    const sent = await api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go", wait: true });
    assert.is(sent.status, 200);
    const all = await records(brain, s.id);
    const outcome = ofType(all, "tool.result")[0]!.data.outcome as { status: string };
    assert.is(outcome.status, status === 200 ? "ok" : "error");
    const text = JSON.stringify(all);
    assert.match(text, /\[redacted\]/, `the ${status} body's quote is there, redacted`);
    assertClean(`the journal after a ${status}`, text);
  }
});

test("a host emitting the operator token and its own secret: the journal holds neither; the disk neither", async () => {
  const echo = contract("echo");
  const host = await TestHost.register(brain, [echo], { hostId: "leaky-host", secret: HOST_SECRET });
  try {
    const s = await createSession(brain, [placed(echo, host.hostId)], [{ toolCalls: [{ name: "echo", input: {} }] }, { text: "done" }]);
    const sent = api(brain, "POST", `/v1/sessions/${s.id}/messages`, { text: "go", wait: true });
    const invoke = await host.invoke();
    assert.is((await host.request({ type: "emit", callId: invoke.callId, kind: "leak", data: { token: OPERATOR, [HOST_SECRET]: "as a key" } })).type, "committed");
    const rejected = await host.request({ type: "finish", callId: "no-such-call", outcome: { status: "ok", value: OPERATOR } });
    assertClean("a rejected frame", JSON.stringify(rejected));
    await host.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value: `secret: ${HOST_SECRET}` }, content: `token ${OPERATOR}` });
    assert.is((await sent).body.status, "completed");
    const all = await records(brain, s.id);
    assert.equal(ofType(all, "tool.event")[0]!.data.data, { token: "[redacted]", "[redacted]": "as a key" });
    assertClean("the journal", JSON.stringify(all));
  } finally {
    await host.close();
  }
  // Everything above, on disk: the database file and the WAL.
  await brain.internals.store.flush();
  const bytes = diskBytes(dir);
  assert.ok(bytes.length > 0);
  assertClean("the SQLite journal and WAL", bytes);
});

test("the log of the run holds no secret: JSON lines with the node, session and call ids, and [redacted] where a secret was", async () => {
  const created = await api(brain, "POST", "/v1/keys", { name: "tenant" });
  assert.is(created.status, 201);
  apiKey = created.body.key;
  const echo = contract("echo");
  const host = await TestHost.register(brain, [echo], { hostId: "logged-host", secret: HOST_SECRET });
  let callId = "";
  try {
    // A session under the API key whose call fails with the secrets in its message.
    const s = await api(brain, "POST", "/v1/sessions", { model: { provider: "scripted", script: [{ toolCalls: [{ name: "echo", input: {} }] }, { text: "done" }] }, tools: [placed(echo, host.hostId)] }, { token: apiKey });
    assert.is(s.status, 201);
    const sent = api(brain, "POST", `/v1/sessions/${s.body.id}/messages`, { text: "go", wait: true }, { token: apiKey });
    const invoke = await host.invoke();
    callId = invoke.callId;
    await host.request({ type: "finish", callId: invoke.callId, outcome: { status: "error", error: { code: "tool_error", message: `bad key ${apiKey}, secret ${HOST_SECRET}, token ${OPERATOR}` } } });
    assert.is((await sent).body.status, "completed");
  } finally {
    await host.close();
  }
  // Whatever a part of the runtime (or a plugin) puts in an entry is redacted on the way out.
  pluginLogger!.warn(`leaking ${PROVIDER_KEY}`, { header: `Bearer ${ENV_SECRET}`, nested: { apiKey, operator: OPERATOR }, error: new Error(`failed with ${HOST_SECRET}`) });
  const log = logLines.join("\n");
  assertClean("the log", log);
  const entries = logLines.map((l) => JSON.parse(l) as Record<string, unknown>);
  for (const e of entries) {
    assert.type(e.time, "string");
    assert.ok(["debug", "info", "warn", "error"].includes(e.level as string));
    assert.match(String(e.nodeId), /^node_[0-9a-f]{12}$/, "every entry names the node");
  }
  assert.ok(entries.some((e) => e.message === "a turn failed" && typeof e.sessionId === "string"), "the provider's refusal is logged with the session");
  const ended = entries.find((e) => e.message === "a tool call ended without success" && e.callId === callId);
  assert.ok(ended, "a failed call is logged with its call id");
  assert.match(String(ended!.error), /\[redacted\]/);
  const leaked = entries.find((e) => String(e.message).startsWith("leaking"))!;
  assert.equal(leaked, { ...leaked, message: "leaking [redacted]", header: "[redacted]", nested: { apiKey: "[redacted]", operator: "[redacted]" }, error: { message: "failed with [redacted]" } });
});

test.run();
