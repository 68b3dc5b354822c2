// Tenancy (issue 16): the operator token issues API keys; a session belongs to the key that created
// it and is 404 to every other key on every route; a host registers under a key and is placed only
// in that key's sessions; a revoked key is refused everywhere and its hosts are disconnected.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validate } from "@aexhq/brain-protocol";
import { startBrain } from "../src/index.ts";
import { memoryBrain, api, createSession, records, waitFor, ofType } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost } from "./helpers/host.ts";

const tool = contract("lookup");

async function newKey(brain: Brain, name: string): Promise<{ id: string; key: string }> {
  const r = await api(brain, "POST", "/v1/keys", { name });
  assert.is(r.status, 201, JSON.stringify(r.body));
  assert.ok(validate.CreatedApiKey.Check(r.body), JSON.stringify(r.body));
  return r.body;
}

/** The brain as seen through one credential. */
const as = (brain: Brain, token: string) => ({ url: brain.url, token });

test("the operator issues, lists and revokes keys; keys never administer keys; a revoked key is 401 everywhere", async () => {
  const brain = await memoryBrain();
  try {
    const a = await newKey(brain, "app-a");
    assert.match(a.key, /^bk_[0-9a-f]{12}_/);
    const list = await api(brain, "GET", "/v1/keys");
    assert.ok(validate.KeyList.Check(list.body));
    assert.equal(list.body.keys.map((k: { name: string }) => k.name), ["app-a"]);
    // The secret is everything after `bk_<id>_`; base64url has `_` in its alphabet, so split("_")
    // would sometimes keep a fragment short enough to occur in the list by chance.
    const secret = a.key.slice("bk_".length + 12 + 1);
    assert.is(secret.length, 43);
    assert.not.ok(JSON.stringify(list.body).includes(secret), "the list never shows a secret");
    for (const [method, path, body] of [["GET", "/v1/keys"], ["POST", "/v1/keys", { name: "x" }], ["DELETE", `/v1/keys/${a.id}`]] as const) {
      const r = await api(as(brain, a.key), method, path, body);
      assert.is(r.status, 403, `${method} ${path} with a key`);
      assert.is(r.body.error.code, "forbidden");
    }
    assert.is((await api(as(brain, a.key), "GET", "/v1/sessions")).status, 200, "a live key is accepted");
    assert.is((await api(brain, "POST", "/v1/keys", { name: "" })).status, 400);
    assert.is((await api(brain, "DELETE", "/v1/keys/000000000000")).status, 404);
    const revoked = await api(brain, "DELETE", `/v1/keys/${a.id}`);
    assert.is(revoked.status, 200);
    assert.ok(typeof revoked.body.revokedAt === "string");
    for (const token of [a.key, `${a.key}x`, "bk_000000000000_" + "A".repeat(43), "not-a-key"]) {
      const r = await api(as(brain, token), "GET", "/v1/sessions");
      assert.is(r.status, 401, token);
      assert.is(r.body.error.code, "unauthorized");
    }
  } finally {
    await brain.close();
  }
});

test("a session is 404 to another key on every route, visible to its own key and to the operator", async () => {
  const brain = await memoryBrain();
  try {
    const a = await newKey(brain, "a");
    const b = await newKey(brain, "b");
    const created = await api(as(brain, a.key), "POST", "/v1/sessions", { model: { provider: "scripted", script: [{ text: "hi" }, { text: "again" }] }, tools: [] });
    assert.is(created.status, 201);
    const id = created.body.id as string;
    assert.is((await api(as(brain, a.key), "POST", `/v1/sessions/${id}/messages`, { text: "x", wait: true })).body.text, "hi");
    const operatorSession = await createSession(brain, [], [{ text: "op" }]);

    const other = as(brain, b.key);
    const routes: Array<[string, string, unknown?]> = [
      ["GET", `/v1/sessions/${id}`],
      ["GET", `/v1/sessions/${id}/events`],
      ["GET", `/v1/sessions/${id}/events?expand=requests`],
      ["POST", `/v1/sessions/${id}/messages`, { text: "steal" }],
      ["POST", `/v1/sessions/${id}/cancel`, {}],
      ["DELETE", `/v1/sessions/${id}`],
      ["GET", `/v1/sessions/${operatorSession.id}`],
    ];
    for (const [method, path, body] of routes) {
      const r = await api(other, method, path, body);
      assert.is(r.status, 404, `${method} ${path} with another key`);
      assert.is(r.body.error.code, "not_found");
      assert.is(r.body.error.message, `no session ${path.split("/")[3]}`, "the same answer as for a session that does not exist");
    }
    const sse = await fetch(`${brain.url}/v1/sessions/${id}/events`, { headers: { authorization: `Bearer ${b.key}`, accept: "text/event-stream" } });
    assert.is(sse.status, 404);
    await sse.body?.cancel();
    assert.equal((await api(other, "GET", "/v1/sessions")).body.sessions, [], "another key lists nothing");
    assert.equal((await api(as(brain, a.key), "GET", "/v1/sessions")).body.sessions.map((s: { id: string }) => s.id), [id], "its own key lists its own only");
    const all = (await api(brain, "GET", "/v1/sessions")).body.sessions.map((s: { id: string }) => s.id);
    assert.equal(new Set(all), new Set([id, operatorSession.id]), "the operator lists everything");
    assert.is((await api(brain, "GET", `/v1/sessions/${id}`)).status, 200);
    assert.is(ofType(await records(brain, id), "session.created")[0]!.data.owner, a.id, "session.created names its owner");
    // Nothing the other key tried changed the session.
    assert.is((await api(as(brain, a.key), "POST", `/v1/sessions/${id}/messages`, { text: "y", wait: true })).body.text, "again");
    assert.is((await api(as(brain, a.key), "DELETE", `/v1/sessions/${id}`)).body.status, "deleted");
  } finally {
    await brain.close();
  }
});

test("a host registered under a key is placed only in that key's sessions; an operator host anywhere; a host id stays with its credential", async () => {
  const brain = await memoryBrain();
  const a = await newKey(brain, "a");
  const b = await newKey(brain, "b");
  const hostA = await TestHost.register(as(brain, a.key), [tool], { hostId: "host-of-a", secret: "secret-of-host-a" });
  const operatorHost = await TestHost.register(brain, [tool], { hostId: "host-of-operator", secret: "secret-of-the-operator-host" });
  try {
    const body = (hostId: string) => ({ model: { provider: "scripted", script: [{ toolCalls: [{ name: "lookup", input: {} }] }, { text: "done" }] }, tools: [placed(tool, hostId)] });
    const refused = await api(as(brain, b.key), "POST", "/v1/sessions", body("host-of-a"));
    assert.is(refused.status, 400);
    assert.is(refused.body.error.code, "not_registered", "to another key the host does not exist");
    assert.is((await api(brain, "GET", "/v1/sessions")).body.sessions.length, 0, "the refused creation left nothing");
    assert.is((await api(as(brain, b.key), "POST", "/v1/sessions", body("host-of-operator"))).status, 201, "the operator's host serves any key");
    const mine = await api(as(brain, a.key), "POST", "/v1/sessions", body("host-of-a"));
    assert.is(mine.status, 201);
    const sent = api(as(brain, a.key), "POST", `/v1/sessions/${mine.body.id}/messages`, { text: "go", wait: true });
    const invoke = await hostA.invoke();
    assert.is(invoke.sessionId, mine.body.id);
    assert.is((await hostA.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value: 1 } })).type, "committed");
    assert.is((await sent).body.status, "completed");
    // GET /v1/hosts/:id follows the same rule.
    assert.is((await api(as(brain, b.key), "GET", "/v1/hosts/host-of-a")).status, 404);
    const info = await api(as(brain, a.key), "GET", "/v1/hosts/host-of-a");
    assert.is(info.status, 200);
    assert.equal(info.body.sessions, [mine.body.id]);
    assert.is((await api(brain, "GET", "/v1/hosts/host-of-a")).status, 200);
    // The host id belongs to key a: key b cannot take it over, even with the right secret.
    const thief = await TestHost.connect(brain.url, { hostId: "host-of-a", secret: "secret-of-host-a" });
    const reply = await thief.registerTools(b.key, [tool]);
    assert.is(reply.type, "error");
    assert.is((reply as { error: { code: string } }).error.code, "unauthorized");
    assert.is((await thief.closed).code, 4401);
  } finally {
    await hostA.close();
    await operatorHost.close();
    await brain.close();
  }
});

test("revoking a key disconnects its hosts at once: their open calls end unknown", async () => {
  const brain = await memoryBrain();
  const a = await newKey(brain, "a");
  const host = await TestHost.register(as(brain, a.key), [tool], { hostId: "host-to-revoke", secret: "secret-of-the-revoked-host" });
  try {
    const s = await api(as(brain, a.key), "POST", "/v1/sessions", { model: { provider: "scripted", script: [{ toolCalls: [{ name: "lookup", input: {} }] }, { text: "done" }] }, tools: [placed(tool, "host-to-revoke")] });
    await api(as(brain, a.key), "POST", `/v1/sessions/${s.body.id}/messages`, { text: "go" });
    const invoke = await host.invoke();
    assert.is((await api(brain, "DELETE", `/v1/keys/${a.id}`)).status, 200);
    assert.is((await host.closed).code, 4401);
    const all = await waitFor(brain, s.body.id, (r) => r.type === "tool.finished");
    const finished = ofType(all, "tool.finished").find((r) => r.data.callId === invoke.callId)!;
    assert.is(finished.data.status, "unknown");
    const again = await TestHost.connect(brain.url, { hostId: "host-to-revoke", secret: "secret-of-the-revoked-host" });
    assert.is((await again.registerTools(a.key, [tool])).type, "error", "a revoked key cannot register hosts");
  } finally {
    await host.close();
    await brain.close();
  }
});

test("sqlite: keys, revocations and owners survive a restart, also for sessions that are not resident", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-keys-"));
  let brain = await startBrain({ dataDir: dir, port: 0, residentSessions: 0 });
  try {
    const a = await newKey(brain, "a");
    const b = await newKey(brain, "b");
    const s = await api(as(brain, a.key), "POST", "/v1/sessions", { model: { provider: "scripted", script: [{ text: "hi" }] }, tools: [] });
    await api(brain, "DELETE", `/v1/keys/${b.id}`);
    await brain.close();
    brain = await startBrain({ dataDir: dir, port: 0, token: brain.token, residentSessions: 0 });
    assert.is(brain.internals.sessions.held.resident, 0);
    assert.is((await api(as(brain, a.key), "GET", `/v1/sessions/${s.body.id}`)).status, 200);
    assert.is((await api(as(brain, b.key), "GET", `/v1/sessions/${s.body.id}`)).status, 401, "still revoked");
    const c = await newKey(brain, "c");
    assert.is((await api(as(brain, c.key), "GET", `/v1/sessions/${s.body.id}`)).status, 404, "the owner is known without paging the session in");
    assert.equal((await api(as(brain, c.key), "GET", "/v1/sessions")).body.sessions, []);
    assert.equal((await api(brain, "GET", "/v1/keys")).body.keys.map((k: { name: string; revokedAt?: string }) => [k.name, k.revokedAt !== undefined]), [["a", false], ["b", true], ["c", false]]);
  } finally {
    await brain.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** `brain keys …` from the sources, as an operator runs it. */
function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const cwd = fileURLToPath(new URL("..", import.meta.url));
  return new Promise((resolve) => {
    execFile(process.execPath, ["--conditions=brain-source", "--import", "tsx", "src/cli.ts", ...args], { cwd, env: { PATH: process.env.PATH!, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

test("brain keys create / list / revoke talk to the running server with the operator token from the data folder", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-keys-cli-"));
  const token = "operator-token-of-the-cli-test";
  writeFileSync(join(dir, "operator.token"), token + "\n");
  const brain = await startBrain({ dataDir: dir, port: 0, token });
  try {
    const env = { BRAIN_URL: brain.url, BRAIN_DATA_DIR: dir };
    const created = await cli(["keys", "create", "billing"], env);
    assert.is(created.code, 0, created.stderr);
    const key = created.stdout.trim();
    assert.match(key, /^bk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    assert.match(created.stderr, /shown once/);
    assert.is((await api(as(brain, key), "GET", "/v1/sessions")).status, 200, "the printed key works");
    const listed = await cli(["keys", "list"], env);
    assert.is(listed.code, 0);
    const id = key.split("_")[1]!;
    assert.match(listed.stdout, new RegExp(`^${id}  \\S+  active  billing$`, "m"));
    // Limits (issue 32): set, cleared with none, shown in the list; a bad one is refused.
    const limited = await cli(["keys", "limits", id, "sessions=3", "requestsPerSecond=20"], env);
    assert.is(limited.code, 0, limited.stderr);
    assert.match(limited.stdout, new RegExp(`^${id} \\(billing\\): sessions=3 requestsPerSecond=20$`, "m"));
    assert.equal((await api(brain, "GET", "/v1/keys")).body.keys[0].limits, { sessions: 3, requestsPerSecond: 20 });
    assert.match((await cli(["keys", "list"], env)).stdout, new RegExp(`^${id}  \\S+  active  billing  limits: sessions=3 requestsPerSecond=20$`, "m"));
    assert.match((await cli(["keys", "limits", id, "requestsPerSecond=none"], env)).stdout, /: sessions=3\n/);
    assert.match((await cli(["keys", "limits", id], env)).stdout, /set on the key: sessions=3/);
    assert.is((await cli(["keys", "limits", id, "tokens=3"], env)).code, 2, "an unknown limit is a usage error");
    const zero = await cli(["keys", "limits", id, "requestsPerSecond=0"], env);
    assert.is(zero.code, 1);
    assert.match(zero.stderr, /400 invalid_request/);
    assert.is((await cli(["keys", "revoke", id], env)).code, 0);
    assert.match((await cli(["keys", "list"], env)).stdout, /revoked .* billing/);
    assert.is((await api(as(brain, key), "GET", "/v1/sessions")).status, 401);
    const wrong = await cli(["keys", "list"], { BRAIN_URL: brain.url, BRAIN_TOKEN: "not-the-operator" });
    assert.is(wrong.code, 1);
    assert.match(wrong.stderr, /401 unauthorized/);
    assert.is((await cli(["keys", "frobnicate"], env)).code, 2);
    const down = await cli(["keys", "list"], { BRAIN_URL: "http://127.0.0.1:9", BRAIN_TOKEN: token });
    assert.match(down.stderr, /could not reach the Brain server at http:\/\/127.0.0.1:9/);
  } finally {
    await brain.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
