import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validate } from "@aexhq/brain-protocol";
import type { JournalRecord, ModelResultFrame } from "@aexhq/brain-protocol";
import { startBrain } from "../src/index.ts";
import { memoryBrain, api, createSession, records, waitFor, assertJournal, ofType } from "./helpers/brain.ts";
import type { Brain } from "./helpers/brain.ts";
import { contract, placed } from "./helpers/contract.ts";
import { TestHost } from "./helpers/host.ts";
import { chatServer } from "./helpers/chat-server.ts";

const summarize = contract("summarize");
const ask = { messages: [{ role: "user", content: "Summarize: a long text." }] };

async function modelRequest(host: TestHost, callId: string, request: unknown = ask): Promise<ModelResultFrame> {
  const ref = host.nextRef();
  host.send({ type: "model_request", ref, callId, request } as never);
  const f = await host.next((f) => f.type === "model_result" && f.ref === ref, 10000);
  assert.ok(validate.ModelResultFrame.Check(f), JSON.stringify(f));
  return f as ModelResultFrame;
}

async function started(brain: Brain, host: TestHost, script: unknown[], model?: unknown) {
  const body = { model: model ?? { provider: "scripted", script }, tools: [placed(summarize, host.hostId)] };
  const created = await api(brain, "POST", "/v1/sessions", body);
  assert.is(created.status, 201, JSON.stringify(created.body));
  const sent = await api(brain, "POST", `/v1/sessions/${created.body.id}/messages`, { text: "go" });
  assert.is(sent.status, 202);
  return { sessionId: created.body.id as string, invoke: await host.invoke() };
}

const originOf = (all: JournalRecord[], type: "model.request" | "model.response" | "model.usage", callId: string) =>
  all.filter((r) => r.type === type && (r.data as { origin?: string }).origin === callId) as any[];

test("ctx.model answers with the session's model, journaled with origin before the answer arrives", async () => {
  const brain = await memoryBrain();
  const host = await TestHost.register(brain, [summarize]);
  try {
    // Steps are answered in the order model calls are admitted: the tool's request takes step 2.
    const { sessionId, invoke } = await started(brain, host, [{ toolCalls: [{ name: "summarize", input: {} }] }, { text: "It is long." }, { text: "done" }]);
    const answer = await modelRequest(host, invoke.callId);
    assert.is(answer.result?.text, "It is long.");
    // Read right after the answer: request, response and usage must already be committed.
    const all = await records(brain, sessionId);
    const [req] = originOf(all, "model.request", invoke.callId);
    const [res] = originOf(all, "model.response", invoke.callId);
    assert.equal(req.data.request, ask);
    assert.is(res.data.request, req.sequence);
    assert.is(res.data.result.text, "It is long.");
    assert.is(originOf(all, "model.usage", invoke.callId).length, 1);
    assert.ok(req.sequence > invoke.sequence && res.sequence > req.sequence);
    await host.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value: answer.result!.text } });
    const done = await waitFor(brain, sessionId, (r) => r.type === "turn.completed");
    assert.is(ofType(done, "turn.completed")[0]!.data.text, "done");
    // The Agentloop's own requests carry no origin and still see only the conversation.
    const expanded = ofType(await records(brain, sessionId, 0, { expand: true }), "model.request").filter((r) => r.data.origin === undefined);
    assert.is(expanded.length, 2);
    for (const r of expanded) assert.not.ok(JSON.stringify(r.data.request!).includes("a long text"));
    assertJournal(done);
  } finally {
    await host.close();
    await brain.close();
  }
});

test("a provider error reaches the tool with its code and is journaled; the call goes on", async () => {
  const brain = await memoryBrain();
  const host = await TestHost.register(brain, [summarize]);
  try {
    // The script has no step for the tool's request: the scripted model answers script_exhausted.
    const { sessionId, invoke } = await started(brain, host, [{ toolCalls: [{ name: "summarize", input: {} }] }]);
    const answer = await modelRequest(host, invoke.callId);
    assert.is(answer.error?.code, "script_exhausted");
    const all = await records(brain, sessionId);
    assert.is(originOf(all, "model.response", invoke.callId)[0].data.error.code, "script_exhausted");
    assert.is(originOf(all, "model.usage", invoke.callId).length, 0);
    const fin = await host.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value: 1 } });
    assert.is(fin.type, "committed");
  } finally {
    await host.close();
    await brain.close();
  }
});

test("tool model calls share the activation's model-call budget with the Agentloop (BRAIN_MAX_MODEL_CALLS)", async () => {
  const brain = await memoryBrain({ maxModelCalls: 2 });
  const host = await TestHost.register(brain, [summarize]);
  try {
    const { sessionId, invoke } = await started(brain, host, [{ toolCalls: [{ name: "summarize", input: {} }] }, { text: "one" }, { text: "two" }, { text: "done" }]);
    // The Agentloop made call 1; the tool gets call 2; call 3 is refused without journaling anything.
    assert.is((await modelRequest(host, invoke.callId)).result?.text, "one");
    const refused = await modelRequest(host, invoke.callId);
    assert.is(refused.error?.code, "budget_exceeded");
    let all = await records(brain, sessionId);
    assert.is(originOf(all, "model.request", invoke.callId).length, 1);
    // The call itself is not ended by the refusal; the Agentloop's next call is over budget too.
    await host.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value: 1 } });
    all = await waitFor(brain, sessionId, (r) => r.type === "turn.failed");
    assert.is(ofType(all, "turn.failed")[0]!.data.error.code, "budget_exceeded");
    assert.is(ofType(all, "model.request").length, 2);
    assertJournal(all);
  } finally {
    await host.close();
    await brain.close();
  }
});

test("an invalid model request is refused invalid_request before anything is journaled", async () => {
  const brain = await memoryBrain();
  const host = await TestHost.register(brain, [summarize]);
  try {
    const { sessionId, invoke } = await started(brain, host, [{ toolCalls: [{ name: "summarize", input: {} }] }, { text: "x" }]);
    // Frames are validated by the router; a component's request-json reaches the call directly.
    const call = brain.internals.dispatcher.getCall(invoke.callId)!;
    const err = await call.model({ messages: [] } as never).then(() => undefined, (e) => e);
    assert.is(err?.code, "invalid_request");
    assert.is(originOf(await records(brain, sessionId), "model.request", invoke.callId).length, 0);
    await host.request({ type: "finish", callId: invoke.callId });
  } finally {
    await host.close();
    await brain.close();
  }
});

test("finishing the tool interrupts its model call: journaled unknown, the provider's request is aborted, never replayed", async () => {
  const api_ = await chatServer([{ toolCalls: [{ id: "c1", name: "summarize", input: {} }] }, "hang", { text: "done" }]);
  const brain = await memoryBrain({ models: { openai: { baseUrl: api_.url, apiKey: "sk-test" } } });
  const host = await TestHost.register(brain, [summarize]);
  try {
    const { sessionId, invoke } = await started(brain, host, [], { provider: "openai", model: "gpt-test" });
    const pending = modelRequest(host, invoke.callId);
    await waitFor(brain, sessionId, (r) => r.type === "model.request" && r.data.origin === invoke.callId);
    await host.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value: "gave up" } });
    const answer = await pending;
    assert.is(answer.error?.code, "call_finished");
    await api_.aborted();
    const all = await waitFor(brain, sessionId, (r) => r.type === "turn.completed");
    const [res] = originOf(all, "model.response", invoke.callId);
    assert.is(res.data.error.code, "unknown");
    assert.is(api_.requests.length, 3, "the interrupted request was sent once and not replayed");
    assert.is(api_.requests[1]!.messages[0].content, "Summarize: a long text.");
    assertJournal(all);
  } finally {
    await host.close();
    await brain.close();
    await api_.close();
  }
});

test("a deadline stops a pending model call the same way", async () => {
  const api_ = await chatServer(["hang"]);
  const brain = await memoryBrain({ models: { openai: { baseUrl: api_.url, apiKey: "sk-test" } } });
  const host = await TestHost.register(brain, [summarize]);
  try {
    // The scripted Agentloop places the call with a 300 ms deadline; the tool's model call uses the openai session below.
    const created = await api(brain, "POST", "/v1/sessions", { model: { provider: "openai", model: "m" }, tools: [placed(summarize, host.hostId)], deadlineMs: 300 });
    assert.is(created.status, 201);
    const sessionId = created.body.id as string;
    const state = await brain.internals.sessions.state(sessionId);
    const [call] = brain.internals.dispatcher.start(state, 0, [{ modelCallId: "m1", tool: state.created.tools[0]!, input: {}, deadlineAt: Date.now() + 300 }], brain.internals.sessions.loopOf(sessionId)!);
    const invoke = await host.invoke();
    assert.is(invoke.callId, call!.callId);
    const answer = await modelRequest(host, invoke.callId);
    assert.is(answer.error?.code, "call_finished");
    await api_.aborted();
    const all = await waitFor(brain, sessionId, (r) => r.type === "model.response" && r.data.origin === invoke.callId);
    assert.is(ofType(all, "tool.finished")[0]!.data.status, "timeout");
    assert.is(originOf(all, "model.response", invoke.callId)[0].data.error.code, "unknown");
  } finally {
    await host.close();
    await brain.close();
    await api_.close();
  }
});

test("a model call open when the runtime stops is answered unknown on recovery", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-model-restart-"));
  const api_ = await chatServer([{ toolCalls: [{ id: "c1", name: "summarize", input: {} }] }, "hang"]);
  const models = { openai: { baseUrl: api_.url, apiKey: "sk-test" } };
  let brain = await startBrain({ dataDir: dir, port: 0, models });
  const host = await TestHost.register(brain, [summarize], { hostId: "h-restart", secret: "secret-for-the-restart-test" });
  let sessionId = "";
  try {
    const s = await started(brain, host, [], { provider: "openai", model: "m" });
    sessionId = s.sessionId;
    void modelRequest(host, s.invoke.callId).catch(() => {});
    const before = await waitFor(brain, sessionId, (r) => r.type === "model.request" && r.data.origin === s.invoke.callId);
    const request = originOf(before, "model.request", s.invoke.callId)[0].sequence;
    await host.kill();
    await brain.close();
    brain = await startBrain({ dataDir: dir, port: 0, models });
    const all = await records(brain, sessionId);
    const res = originOf(all, "model.response", s.invoke.callId);
    assert.is(res.length, 1);
    assert.is(res[0].data.request, request);
    assert.is(res[0].data.error.code, "unknown");
    assert.is(api_.requests.length, 2, "not replayed after the restart");
    assertJournal(all);
  } finally {
    await brain.close();
    await api_.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a real provider drives the Agentloop: tools offered, results fed back, usage journaled", async () => {
  const api_ = await chatServer([{ toolCalls: [{ id: "c1", name: "summarize", input: { text: "abc" } }] }, { text: "Summarized." }]);
  const brain = await memoryBrain({ models: { openai: { baseUrl: api_.url, apiKey: "sk-test" } } });
  const host = await TestHost.register(brain, [summarize]);
  try {
    const { sessionId, invoke } = await started(brain, host, [], { provider: "openai", model: "gpt-test" });
    assert.equal(invoke.input, { text: "abc" });
    await host.request({ type: "finish", callId: invoke.callId, outcome: { status: "ok", value: "short" }, content: "short" });
    const all = await waitFor(brain, sessionId, (r) => r.type === "turn.completed");
    assert.is(ofType(all, "turn.completed")[0]!.data.text, "Summarized.");
    assert.equal(ofType(all, "model.usage").map((r) => r.data.usage), [{ inputTokens: 7, outputTokens: 3 }, { inputTokens: 7, outputTokens: 3 }]);
    assert.is(api_.requests[0]!.model, "gpt-test");
    assert.is(api_.requests[0]!.tools[0].function.name, "summarize");
    assert.equal(api_.requests[1]!.messages.at(-1), { role: "tool", tool_call_id: "c1", content: "short" });
    assertJournal(all);
  } finally {
    await host.close();
    await brain.close();
    await api_.close();
  }
});

test("session creation refuses an unconfigured provider (400 unsupported) and an unallowed baseUrl (403 forbidden)", async () => {
  const brain = await memoryBrain({ models: { openai: { apiKey: "sk-test", allowedBaseUrls: ["http://127.0.0.1:9/v1"] } } });
  try {
    const create = (model: unknown) => api(brain, "POST", "/v1/sessions", { model, tools: [] });
    const anthropic = await create({ provider: "anthropic", model: "claude" });
    assert.is(anthropic.status, 400);
    assert.is(anthropic.body.error.code, "unsupported");
    assert.match(anthropic.body.error.message, "ANTHROPIC_API_KEY");
    const elsewhere = await create({ provider: "openai", model: "m", baseUrl: "http://attacker.example/v1" });
    assert.is(elsewhere.status, 403);
    assert.is(elsewhere.body.error.code, "forbidden");
    assert.is((await create({ provider: "openai", model: "m" })).status, 201);
    assert.is((await create({ provider: "openai", model: "m", baseUrl: "http://127.0.0.1:9/v1/" })).status, 201);
    assert.is((await create({ provider: "openai", model: "m", baseUrl: "https://api.openai.com/v1" })).status, 201);
  } finally {
    await brain.close();
  }
});

test.run();
