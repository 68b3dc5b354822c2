// Environments are an explicit list given to startBrain (issue 27): a test Environment plugged in
// through `environments` serves a call end to end, with nothing in server.ts knowing it; the default
// list is what a runtime has when none is given; a plugin's failure stops the start cleanly; the
// runtime's log lines go to the logger it is given, and a failure it survives is logged there, not dropped.
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { PlacedTool } from "@aexhq/brain-protocol";
import { startBrain, defaultEnvironments } from "../src/index.ts";
import type { Environment, EnvironmentPlugin, Logger } from "../src/index.ts";
import { api, waitFor, assertJournal, ofType, createSession } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost } from "./helpers/host.ts";

/** Answers every call with the length of its input's `text`, through the same sink every Environment uses. */
class LengthEnvironment implements Environment {
  readonly kind = "descriptor" as const;
  started: string[] = [];
  closed = false;
  admit(tool: PlacedTool) {
    return tool.placement.kind === "descriptor" && tool.placement.env === "length" ? undefined : { code: "unsupported", message: "only the length environment is served here" };
  }
  start(call: Parameters<Environment["start"]>[0], sink: Parameters<Environment["start"]>[1]) {
    this.started.push(call.callId);
    const text = (call.input as { text: string }).text;
    void sink.emit("measuring", { chars: text.length }).then(() => sink.finish({ status: "ok", value: { length: text.length } }));
    return { stop: () => {} };
  }
  close() {
    this.closed = true;
  }
}

const length = contract("length");

test("a test Environment passed to startBrain serves a call, without any change to the runtime", async () => {
  const env = new LengthEnvironment();
  let installedWith: string | undefined;
  const plugin: EnvironmentPlugin = {
    name: "length",
    install(ctx) {
      installedWith = ctx.storeKind;
      ctx.provide("descriptor", env);
    },
  };
  // The default descriptor Environment serves the same placement kind: this one takes its place.
  const brain = await startBrain({ dataDir: ":memory:", port: 0, environments: [...defaultEnvironments().filter((p) => p.name !== "descriptor"), plugin] });
  try {
    assert.is(installedWith, "memory");
    const tool: PlacedTool = { contract: length, options: {}, placement: { kind: "descriptor", env: "length", descriptor: {} } };
    const created = await api(brain, "POST", "/v1/sessions", { model: { provider: "scripted", script: [{ toolCalls: [{ name: "length", input: { text: "hello" } }] }, { text: "done" }] }, tools: [tool] });
    assert.is(created.status, 201, JSON.stringify(created.body));
    const refused = await api(brain, "POST", "/v1/sessions", { model: { provider: "scripted", script: [] }, tools: [{ ...tool, placement: { kind: "descriptor", env: "other", descriptor: {} } }] });
    assert.is(refused.status, 400);
    assert.is(refused.body.error.code, "unsupported");
    assert.is((await api(brain, "POST", `/v1/sessions/${created.body.id}/messages`, { text: "go" })).status, 202);
    const all = await waitFor(brain, created.body.id, (r) => r.type === "turn.completed");
    assertJournal(all);
    assert.equal(env.started, [ofType(all, "tool.call_started")[0]!.data.callId]);
    assert.equal(ofType(all, "tool.event")[0]!.data.data, { chars: 5 });
    assert.equal(ofType(all, "tool.result")[0]!.data.outcome, { status: "ok", value: { length: 5 } });
  } finally {
    await brain.close();
  }
  assert.ok(env.closed, "the runtime closed the plugged-in Environment");
});

test("without `environments` a runtime has the default list; an empty list leaves host placements only", async () => {
  assert.equal(defaultEnvironments().map((p) => p.name), ["component", "managed", "descriptor", "mcp", "http", "control"]);
  const bare = await startBrain({ dataDir: ":memory:", port: 0, environments: [] });
  try {
    assert.equal([...bare.internals.environments.keys()], ["host"]);
    const tool: PlacedTool = { contract: length, options: {}, placement: { kind: "descriptor", env: "length", descriptor: {} } };
    const r = await api(bare, "POST", "/v1/sessions", { model: { provider: "scripted", script: [] }, tools: [tool] });
    assert.is(r.status, 400);
    assert.is(r.body.error.code, "unsupported");
  } finally {
    await bare.close();
  }
  const full = await startBrain({ dataDir: ":memory:", port: 0 });
  try {
    assert.equal([...full.internals.environments.keys()].sort(), ["component", "descriptor", "host", "http", "http_plain", "managed", "mcp"]);
  } finally {
    await full.close();
  }
});

test("a plugin that fails to install stops the start, and what earlier plugins opened is closed", async () => {
  const env = new LengthEnvironment();
  const first: EnvironmentPlugin = { name: "length", install: (ctx) => ctx.provide("descriptor", env) };
  const broken: EnvironmentPlugin = {
    name: "broken",
    install() {
      throw new Error("this plugin's configuration is wrong");
    },
  };
  await startBrain({ dataDir: ":memory:", port: 0, environments: [first, broken] }).then(
    (b) => (b.close(), assert.unreachable("started with a broken plugin")),
    (e: Error) => assert.match(e.message, /configuration is wrong/),
  );
  assert.ok(env.closed);
  // Two plugins serving one placement kind is a configuration error, said at start.
  const twice: EnvironmentPlugin = { name: "again", install: (ctx) => ctx.provide("descriptor", new LengthEnvironment()) };
  await startBrain({ dataDir: ":memory:", port: 0, environments: [first, twice] }).then(
    (b) => (b.close(), assert.unreachable("two Environments for one kind")),
    (e: { code?: string; message: string }) => assert.equal([e.code, /descriptor/.test(e.message)], ["conflict", true]),
  );
});

type LogLine = { level: string; message: string; fields?: Record<string, unknown> };

/** A Logger that keeps every entry. */
function collecting(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger: Logger = {
    debug: (message, fields) => lines.push({ level: "debug", message, fields }),
    info: (message, fields) => lines.push({ level: "info", message, fields }),
    warn: (message, fields) => lines.push({ level: "warn", message, fields }),
    error: (message, fields) => lines.push({ level: "error", message, fields }),
  };
  return { logger, lines };
}

test("the runtime logs through the logger it is given", async () => {
  const { logger, lines } = collecting();
  let given: Logger | undefined;
  const probe: EnvironmentPlugin = { name: "probe", install: (ctx) => void (given = ctx.logger) };
  const brain = await startBrain({ dataDir: ":memory:", port: 0, logger, environments: [probe], nodeId: "node-a" });
  await brain.close();
  given!.warn("plugin says", { n: 1 });
  // Every entry names the node it comes from.
  assert.equal(lines.at(-1), { level: "warn", message: "plugin says", fields: { nodeId: "node-a", n: 1 } });
});

test("a failure the runtime survives is logged, not dropped: a call's tool.finished the journal refuses", async () => {
  const { logger, lines } = collecting();
  const brain = await startBrain({ dataDir: ":memory:", port: 0, logger, nodeId: "node-b" });
  // The journal refuses tool.finished records (a full disk, a fenced node) and nothing else.
  const store = brain.internals.store;
  const append = store.append.bind(store);
  store.append = (record) => (record.type === "tool.finished" ? Promise.reject(new Error("the disk is full")) : append(record));
  const echo = contract("echo");
  const host = await TestHost.register(brain, [echo]);
  try {
    const session = await createSession(brain, [placed(echo, host.hostId)], [{ toolCalls: [{ name: "echo", input: {} }] }, { text: "done" }]);
    await api(brain, "POST", `/v1/sessions/${session.id}/messages`, { text: "go" });
    const invoke = await host.invoke();
    // An error result ends the call: the result is committed and acknowledged, and the call's
    // tool.finished is admitted in the background, where nobody awaits it.
    const answer = await host.request({ type: "emit_result", callId: invoke.callId, outcome: { status: "error", error: { code: "tool_error", message: "no" } } });
    assert.is(answer.type, "committed");
    const until = Date.now() + 5000;
    while (!lines.some((l) => l.fields?.record === "tool.finished") && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    assert.equal(lines.filter((l) => l.fields?.record === "tool.finished"), [
      { level: "warn", message: "a tool call's record was not committed to the journal", fields: { nodeId: "node-b", callId: invoke.callId, record: "tool.finished", error: "the disk is full" } },
    ]);
  } finally {
    await host.close();
    await brain.close();
  }
});

test.run();
