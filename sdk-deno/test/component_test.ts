// The spec's component tool from the Deno SDK: `component(new URL(...))` in a brainEnv with a
// read grant, against the runtime as a Node subprocess. Uses the Rust build of the inspect example
// (built or reused from the cache by scripts/build-components.mjs, ~1 s cold).
import { Brain, brainEnv, component, tool } from "@aexhq/brain";
import type { JournalRecord } from "@aexhq/brain-protocol";
import { z } from "zod";
import { node, serveRuntime } from "../../scripts/deno-runtime.ts";

const token = crypto.randomUUID();
const opts = { sanitizeOps: false, sanitizeResources: false };

// On a machine without rustc (scripts/rust-toolchain.mjs) the test is ignored, and counted: the
// notice line printed here is what the root `npm test` reads to say why.
const rustCheck = await node(["--input-type=module", "-e",
  "const m = await import('./scripts/rust-toolchain.mjs'); const r = m.rustUnavailable(); if (r) m.skipNotice(1, 'sdk-deno/test/component_test.ts', r);"]).output();
const rustNotice = new TextDecoder().decode(rustCheck.stdout).trim();
if (rustNotice) console.log(rustNotice);
const rustMissing = rustNotice.includes("brain-test-skip:");

async function buildRust(): Promise<string> {
  const out = await node(["--input-type=module", "-e", "const m = await import('./scripts/build-components.mjs'); console.log((await m.buildRust()).path);"]).output();
  if (!out.success) throw new Error("building the Rust inspect component failed");
  return new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!;
}

/** `brain serve` with a memory journal and a workspace allow-list; resolves once it listens. */
function serve(workspaceRoot: string): Promise<{ url: string; child: Deno.ChildProcess }> {
  return serveRuntime({ BRAIN_TOKEN: token, BRAIN_JOURNAL: "memory", BRAIN_PORT: "0", BRAIN_WORKSPACE_ROOT: workspaceRoot });
}

async function journal(url: string, sessionId: string): Promise<JournalRecord[]> {
  const res = await fetch(`${url}/v1/sessions/${sessionId}/events`, { headers: { authorization: `Bearer ${token}` } });
  const body = await res.json() as { records: JournalRecord[] };
  return body.records;
}

Deno.test({ name: "component(new URL(...)) from the Deno SDK runs the inspect component in a brainEnv; admission is cached", ignore: rustMissing, ...opts }, async () => {
  const wasm = await buildRust();
  const workspaceRoot = `${Deno.env.get("TMPDIR") ?? "/tmp"}/brain-deno-component-${crypto.randomUUID()}`;
  const runtime = await serve(workspaceRoot);
  const brain = new Brain({ url: runtime.url, token });
  try {
    const inspect = tool({
      name: "inspect",
      description: "Inspect one path.",
      input: z.object({ path: z.string() }),
      options: z.object({ depth: z.number().int().positive() }),
      implementation: component(new URL(`file://${wasm}`)),
    });
    const reader = brainEnv({ name: "reader", filesystem: { workspace: "read" } });
    const model = { provider: "scripted" as const, script: [{ toolCalls: [{ name: "inspect", input: { path: "src/lib.rs" } }] }, { text: "inspected" }] };
    const session = await brain.sessions.create({ model, tools: [inspect({ env: reader, depth: 2 })] });
    const answer = await session.send("inspect it");
    if (answer !== "inspected") throw new Error(`answer ${answer}`);
    const all = await journal(runtime.url, session.id);
    const started = all.find((r) => r.type === "tool.call_started")!;
    const placement = (started.data as { placement: { kind: string; env: string; filesystem?: unknown } }).placement;
    if (placement.kind !== "component" || placement.env !== "reader" || JSON.stringify(placement.filesystem) !== '{"workspace":"read"}') {
      throw new Error(`placement ${JSON.stringify(placement)}`);
    }
    const event = all.find((r) => r.type === "tool.event")!;
    const result = all.find((r) => r.type === "tool.result")!.data as { outcome: { status: string; value: { path: string; depth: number; segments: string[]; eventSequence: number } } };
    const v = result.outcome.value;
    if (result.outcome.status !== "ok" || v.path !== "src/lib.rs" || v.depth !== 2 || JSON.stringify(v.segments) !== '["src","lib.rs"]' || v.eventSequence !== event.sequence) {
      throw new Error(`result ${JSON.stringify(result.outcome)}`);
    }
    const finished = all.find((r) => r.type === "tool.finished")!.data as { status: string };
    if (finished.status !== "ok") throw new Error(`finished ${JSON.stringify(finished)}`);

    // A second session with the same Component object: admission is cached, the call still runs.
    const again = await brain.sessions.create({ model, tools: [inspect({ env: reader, depth: 1 })] });
    if ((await again.send("again")) !== "inspected") throw new Error("second session failed");
    const admitted = (inspect.tool.implementation as { admittedDigest?: string }).admittedDigest;
    if (admitted === undefined || !/^[0-9a-f]{64}$/.test(admitted)) throw new Error(`admission not cached: ${admitted}`);
  } finally {
    await brain.close();
    try { runtime.child.kill("SIGKILL"); } catch { /* already gone */ }
    await runtime.child.status;
    await new Deno.Command("rm", { args: ["-rf", workspaceRoot] }).output();
  }
});
