import { test } from "uvu";
import * as assert from "uvu/assert";
import { z } from "zod";
import { tool, brainEnv, component, hostEnv, BrainError } from "../src/index.ts";
import { withBrain, runStep, ofCall, scripted } from "./helpers/brain.mts";

test("ctx.model sends model_request and surfaces the runtime's answer or error; ctx.environments rejects unsupported", async () => {
  await withBrain(async (brain) => {
    const seen: Record<string, unknown> = {};
    const t = tool({
      name: "t", description: "d", input: z.object({}),
      run: async (_i, ctx) => {
        seen.model = await ctx.model({ messages: [{ role: "user", content: "hi" }] }).then((r) => ({ text: r.text }), (e) => ({ code: e.code }));
        seen.env = await ctx.environments.list().then(() => "resolved", (e) => (e as BrainError).code);
        return ctx.finish(null);
      },
    });
    const { all, ids } = await runStep(brain, [t()], [{ name: "t", input: {} }]);
    assert.is((ofCall(all, ids[0]!).at(-1) as any).data.status, "ok");
    assert.is(seen.env, "unsupported");
    // Whatever the runtime answers reaches the tool: its result, or its error (today the runtime
    // refuses tool model calls with `unsupported`, journaling nothing). Never a fake answer.
    const response = all.find((r) => r.type === "model.response" && (r.data as { origin?: string }).origin === ids[0]) as any;
    if (response === undefined) assert.equal(seen.model, { code: "unsupported" });
    else if (response.data.error) assert.equal(seen.model, { code: response.data.error.code });
    else assert.equal(seen.model, { text: response.data.result.text });
  });
});

test("placements the SDK cannot run throw a clear unsupported error", async () => {
  await withBrain(async (brain) => {
    const inspect = tool({ name: "inspect", description: "d", input: z.object({ path: z.string() }), options: z.object({ depth: z.number() }), implementation: component("file:///tmp/inspect.wasm") });
    const run = tool({ name: "r", description: "d", input: z.object({}), run: async () => null });
    // A component needs a brainEnv; a run tool inside brainEnv (a packaged tool) is not supported yet.
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

test.run();
