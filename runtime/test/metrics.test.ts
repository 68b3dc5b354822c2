import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { memoryBrain, api, createSession, waitFor, finishedOf } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost } from "./helpers/host.ts";

let brain: Brain;
const hosts: TestHost[] = [];
const echo = contract("echo");

test.before(async () => {
  brain = await memoryBrain({ metricsListen: { host: "127.0.0.1", port: 0 } });
});
test.after(async () => {
  for (const h of hosts) await h.close();
  await brain.close();
});

/**
 * The Prometheus text exposition format (version 0.0.4), parsed strictly: every line is a `# HELP`
 * or `# TYPE` comment or one sample `name{label="value",…} number`; anything else fails the test.
 * Returns the samples by `name{labels}` as printed.
 */
function parsePrometheus(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  const types = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const comment = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (comment !== null) {
      if (comment[1] === "TYPE") {
        assert.ok(["counter", "gauge", "histogram", "summary", "untyped"].includes(comment[3]!), `type of ${comment[2]}: ${comment[3]}`);
        types.set(comment[2]!, comment[3]!);
      }
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\})? (-?[0-9.e+-]+|NaN|\+Inf|-Inf)$/.exec(line);
    assert.ok(m !== null, `not a Prometheus sample line: ${JSON.stringify(line)}`);
    const family = m![1]!.replace(/_(bucket|sum|count)$/, "");
    assert.ok(types.has(m![1]!) || types.has(family), `sample ${m![1]} before its # TYPE`);
    samples.set(`${m![1]}${m![2] ?? ""}`, Number(m![3]));
  }
  return samples;
}

async function scrape(): Promise<Map<string, number>> {
  const r = await fetch(`${brain.url}/metrics`, { headers: { authorization: `Bearer ${brain.token}` } });
  assert.is(r.status, 200);
  assert.match(r.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  return parsePrometheus(await r.text());
}

const delta = (before: Map<string, number>, after: Map<string, number>, key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);

test("GET /metrics is Prometheus text, and the call counters move by exactly the calls made: ok, error, timeout, unknown", async () => {
  const host = await TestHost.register(brain, [echo]);
  hosts.push(host);
  const doomed = await TestHost.register(brain, [echo]);
  const before = await scrape();
  assert.is(before.get("brain_hosts_connected"), 2);

  // One step with two calls: the host answers the first ok, the second with an error outcome.
  const s1 = await createSession(brain, [placed(echo, host.hostId)], [{ toolCalls: [{ name: "echo", input: { n: 1 } }, { name: "echo", input: { n: 2 } }] }, { text: "done" }]);
  await api(brain, "POST", `/v1/sessions/${s1.id}/messages`, { text: "go" });
  const a = await host.invoke();
  const b = await host.invoke();
  await host.request({ type: "finish", callId: a.callId, outcome: { status: "ok", value: 1 } });
  await host.request({ type: "finish", callId: b.callId, outcome: { status: "error", error: { code: "tool_error", message: "no" } } });
  await waitFor(brain, s1.id, (r) => r.type === "turn.completed");

  // A call the host never answers, under a deadline: timeout.
  const s2 = await createSession(brain, [placed(echo, host.hostId)], [{ toolCalls: [{ name: "echo", input: {} }] }, { text: "late" }], { deadlineMs: 100 });
  await api(brain, "POST", `/v1/sessions/${s2.id}/messages`, { text: "go" });
  const c = await host.invoke();
  await waitFor(brain, s2.id, (_r, all) => finishedOf(all, c.callId).length > 0);

  // A call whose host dies while it runs: unknown.
  const s3 = await createSession(brain, [placed(echo, doomed.hostId)], [{ toolCalls: [{ name: "echo", input: {} }] }, { text: "gone" }]);
  await api(brain, "POST", `/v1/sessions/${s3.id}/messages`, { text: "go" });
  const d = await doomed.invoke();
  await doomed.kill();
  await waitFor(brain, s3.id, (_r, all) => finishedOf(all, d.callId).length > 0);
  await waitFor(brain, s3.id, (r) => r.type === "turn.completed");
  await waitFor(brain, s2.id, (r) => r.type === "turn.completed");

  const after = await scrape();
  for (const status of ["ok", "error", "timeout", "unknown"]) {
    assert.is(delta(before, after, `brain_tool_calls_total{placement="host",status="${status}"}`), 1, `calls ${status}`);
    assert.is(delta(before, after, `brain_tool_call_duration_seconds_count{placement="host",status="${status}"}`), 1, `duration ${status}`);
  }
  assert.is(delta(before, after, `brain_tool_calls_total{placement="host",status="cancelled"}`), 0);
  // Two model calls per session (the step with calls, then the answer).
  assert.is(delta(before, after, `brain_model_calls_total{provider="scripted",outcome="ok"}`), 6);
  assert.is(delta(before, after, `brain_http_requests_total{method="POST",route="/v1/sessions",status="201"}`), 3);
  assert.is(delta(before, after, `brain_http_requests_total{method="POST",route="/v1/sessions/{id}/messages",status="202"}`), 3);
  assert.ok(delta(before, after, `brain_journal_commit_records_count{store="memory"}`) > 0, "commits are counted");
  assert.ok(delta(before, after, `brain_journal_commit_records_sum{store="memory"}`) >= delta(before, after, `brain_journal_commit_records_count{store="memory"}`));
  assert.is(after.get("brain_tool_calls_open"), 0);
  assert.is(after.get("brain_hosts_connected"), 1, "the killed host is gone");
  assert.is(after.get("brain_sessions_resident"), 3);
});

test("/metrics takes the operator token: an API key is forbidden, no token unauthorized; the metrics listener needs none", async () => {
  const key = await api(brain, "POST", "/v1/keys", { name: "tenant" });
  assert.is(key.status, 201);
  const withKey = await api(brain, "GET", "/metrics", undefined, { token: key.body.key });
  assert.is(withKey.status, 403);
  assert.is(withKey.body.error.code, "forbidden");
  assert.is((await api(brain, "GET", "/metrics", undefined, { token: null })).status, 401);
  const url = brain.metricsUrl!;
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  const open = await fetch(url);
  assert.is(open.status, 200);
  assert.ok(parsePrometheus(await open.text()).has("brain_sessions_resident"));
  assert.is((await fetch(url.replace(/\/metrics$/, "/v1/sessions"))).status, 404);
});

test("with tracing off (no OTEL_* variables) the span writer and its exporter are never loaded", () => {
  // A process of its own, so no other test's tracing counts.
  const child = fileURLToPath(new URL("./helpers/tracing-off.mts", import.meta.url));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("OTEL_")));
  const run = spawnSync(process.execPath, ["--conditions=brain-source", "--import", "tsx", child], { env, encoding: "utf8", timeout: 60_000 });
  assert.is(run.status, 0, run.stderr);
  assert.equal(JSON.parse(run.stdout.trim().split("\n").pop()!), { writerLoads: 0, answered: "completed" });
});

test.run();
