import { test } from "uvu";
import { spawnSync } from "node:child_process";
import * as assert from "uvu/assert";
import { z } from "zod";
import { tool, brainEnv, component, hostEnv, BrainError } from "../src/index.ts";
import { withBrain, runStep, ofCall, scripted, records } from "./helpers/brain.mts";

test("ctx.model answers with the session's model (the summarizer pattern); the call is journaled with its origin", async () => {
  await withBrain(async (brain) => {
    const summarize = tool({
      name: "summarize", description: "Summarize a document.", input: z.object({ text: z.string() }), output: z.object({ summary: z.string() }),
      run: async ({ text }, ctx) => {
        const reply = await ctx.model({ system: "Summarize in one line.", messages: [{ role: "user", content: text }] });
        return ctx.finish({ summary: reply.text }, { content: `Summary: ${reply.text}` });
      },
    });
    // Scripted steps answer model calls in order: 1 the Agentloop (calls the tool), 2 the tool's ctx.model, 3 the Agentloop.
    const session = await brain.sessions.create({ model: scripted({ toolCalls: [{ name: "summarize", input: { text: "A very long report." } }] }, { text: "It is long." }, { text: "done" }), tools: [summarize()] });
    assert.is(await session.send("summarize it"), "done");
    const all = await records(session);
    const callId = (all.find((r) => r.type === "tool.call_started") as any).data.callId;
    const request = all.find((r) => r.type === "model.request" && (r.data as any).origin === callId) as any;
    assert.equal(request.data.request, { system: "Summarize in one line.", messages: [{ role: "user", content: "A very long report." }] });
    const response = all.find((r) => r.type === "model.response" && (r.data as any).origin === callId) as any;
    assert.is(response.data.request, request.sequence);
    const result = all.find((r) => r.type === "tool.result") as any;
    assert.equal(result.data.outcome, { status: "ok", value: { summary: "It is long." } });
    assert.is(result.data.content, "Summary: It is long.");
  });
});

test("ctx.model rejects with the runtime's error code (script exhausted); ctx.environments without a grant rejects forbidden", async () => {
  await withBrain(async (brain) => {
    const seen: Record<string, unknown> = {};
    const t = tool({
      name: "t", description: "d", input: z.object({}),
      run: async (_i, ctx) => {
        seen.model = await ctx.model({ messages: [{ role: "user", content: "hi" }] }).then((r) => ({ text: r.text }), (e) => ({ code: e.code, name: e.name }));
        seen.env = await ctx.environments.list().then(() => "resolved", (e) => (e as BrainError).code);
        return ctx.finish(null);
      },
    });
    const session = await brain.sessions.create({ model: scripted({ toolCalls: [{ name: "t", input: {} }] }), tools: [t()] });
    // The one step went to the Agentloop; the tool's request and the Agentloop's next call find none.
    await session.send("go").then(() => assert.unreachable("the turn completed"), (e) => assert.is(e.code, "script_exhausted"));
    const all = await records(session);
    assert.is((all.find((r) => r.type === "tool.finished") as any).data.status, "ok");
    assert.equal(seen.model, { code: "script_exhausted", name: "ProtocolError" });
    assert.is(seen.env, "forbidden");
  });
});

test("placements the SDK cannot run throw a clear unsupported error", async () => {
  await withBrain(async (brain) => {
    const inspect = tool({ name: "inspect", description: "d", input: z.object({ path: z.string() }), options: z.object({ depth: z.number() }), implementation: component("file:///tmp/inspect.wasm") });
    const run = tool({ name: "r", description: "d", input: z.object({}), run: async () => null });
    // A component needs a brainEnv; a run tool in a brainEnv without runtime (not a managed host) is refused.
    for (const placed of [inspect({ depth: 1 }), run({ env: brainEnv({ name: "reader" }) })]) {
      await brain.sessions.create({ model: scripted({ text: "x" }), tools: [placed] }).then(
        () => assert.unreachable("placed"),
        (e) => { assert.instance(e, BrainError); assert.is(e.code, "unsupported"); },
      );
    }
  });
});

test("hostEnv places a tool on a named host served by another client", async () => {
  await withBrain(async (brain, runtime) => {
    const { Brain } = await import("../src/index.ts");
    const worker = new Brain({ url: runtime.url, token: runtime.token, host: { id: "worker", secret: "worker-secret-0123456789" } });
    try {
      const echo = tool({ name: "echo", description: "d", input: z.object({ s: z.string() }), run: async ({ s }, ctx) => ctx.finish(`worker:${s}`) });
      await worker.serve([echo()]);
      const { all, ids } = await runStep(brain, [echo({ env: hostEnv({ name: "worker" }) })], [{ name: "echo", input: { s: "hi" } }]);
      assert.equal((ofCall(all, ids[0]!).find((r) => r.type === "tool.result") as any).data.outcome, { status: "ok", value: "worker:hi" });
      assert.equal((all[0] as any).data.tools[0].placement, { kind: "host", hostId: "worker" });
    } finally {
      await worker.close();
    }
  });
});

test("ctx is frozen, with own enumerable properties a tool may destructure or spread; signal and environments are read when asked", async () => {
  await withBrain(async (brain) => {
    const seen: Record<string, unknown> = {};
    const t = tool({
      name: "t", description: "d", input: z.object({}), options: z.object({ tag: z.string() }),
      run: async (_i, ctx) => {
        seen.keys = Object.keys(ctx);
        seen.frozen = Object.isFrozen(ctx);
        seen.assign = (() => { try { (ctx as { sessionId: string }).sessionId = "x"; return "assigned"; } catch (e) { return (e as Error).name; } })();
        const spread = { ...ctx };
        seen.spread = { options: spread.options, signal: spread.signal instanceof AbortSignal, environments: typeof spread.environments.list };
        seen.sameSignal = ctx.signal === ctx.signal && ctx.environments === ctx.environments;
        const { emit, finish, sessionId, sequence, deadline } = ctx;
        seen.fields = { sessionId: typeof sessionId, sequence: typeof sequence, deadline };
        seen.emitted = await emit("tick", { i: 1 });
        return finish(null);
      },
    });
    const session = await brain.sessions.create({ model: scripted({ toolCalls: [{ name: "t", input: {} }] }, { text: "done" }), tools: [t({ tag: "a" })] });
    assert.is(await session.send("go"), "done");
    assert.equal(seen.keys, ["options", "sessionId", "sequence", "deadline", "signal", "emit", "emitResult", "finish", "model", "environments"]);
    assert.is(seen.frozen, true);
    assert.is(seen.assign, "TypeError"); // modules are strict: assigning to a frozen property throws
    assert.equal(seen.spread, { options: { tag: "a" }, signal: true, environments: "function" });
    assert.is(seen.sameSignal, true);
    assert.equal(seen.fields, { sessionId: "string", sequence: "number", deadline: undefined });
    assert.is(typeof seen.emitted, "number");
  });
});

test("npm run example:summarize prints the tool's model-made summary and the answer", () => {
  // Run, not imported: tests may not import examples/ (docs/ARCHITECTURE.md).
  const run = spawnSync(process.execPath, ["--conditions=brain-source", "--import", "tsx", "examples/summarize/main.ts"], { cwd: new URL("../../", import.meta.url), encoding: "utf8", timeout: 30000 });
  assert.is(run.status, 0, run.stderr);
  assert.match(run.stdout, /model   asked by ses_[0-9a-f]+:\d+/);
  assert.ok(run.stdout.includes('"summary":"The committee approved the budget, delayed the building plan and chose a new chair.","words":21'), run.stdout);
  assert.ok(run.stdout.includes("answer  The annual report says the budget passed and the building plan waits."), run.stdout);
});

test.run();
