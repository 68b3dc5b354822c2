import { test } from "uvu";
import * as assert from "uvu/assert";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { Brain, tool, component, brainEnv, ProtocolError } from "../src/index.ts";
import { startBrain } from "@aexhq/brain-runtime";
// @ts-ignore: a plain .mjs build script without declarations.
import { buildRust } from "../../scripts/build-components.mjs";
// @ts-ignore: a plain .mjs script without declarations.
import { rustUnavailable, skipNotice } from "../../scripts/rust-toolchain.mjs";
import { records, scripted } from "./helpers/brain.mts";

// The first test needs the Rust inspect example: on a machine without rustc it is skipped, and counted.
const rustMissing: string | undefined = rustUnavailable();
if (rustMissing) skipNotice(1, "sdk-node/test/component.test.ts", rustMissing);
const built: { rust: string } | undefined = rustMissing ? undefined : { rust: (await buildRust()).path };

function inspectTool(url: URL) {
  return tool({
    name: "inspect",
    description: "Inspect one path.",
    input: z.object({ path: z.string() }),
    options: z.object({ depth: z.number().int().positive() }),
    implementation: component(url),
  });
}

(built ? test : test.skip)("the spec's inspect component runs in brainEnv; its bytes are uploaded once, by digest", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-sdk-component-"));
  const runtime = await startBrain({ dataDir: join(dir, "data"), port: 0, workspaceRoot: join(dir, "ws") });
  const brain = new Brain({ url: runtime.url, token: runtime.token });
  try {
    const wasm = join(dir, "inspect.wasm");
    copyFileSync(built!.rust, wasm);
    const inspect = inspectTool(pathToFileURL(wasm));
    const reader = brainEnv({ name: "reader", filesystem: { workspace: "read" } });
    const script = scripted({ toolCalls: [{ name: "inspect", input: { path: "src/lib.rs" } }] }, { text: "inspected" });
    const first = await brain.sessions.create({ model: script, tools: [inspect({ env: reader, depth: 2 })] });
    assert.is(await first.send("inspect it"), "inspected");
    const all = await records(first);
    const started = all.find((r) => r.type === "tool.call_started")!;
    assert.equal((started.data as { placement: unknown }).placement, { kind: "component", env: "reader", digest: inspect.tool.implementation && (inspect.tool.implementation as { admittedDigest?: string }).admittedDigest, filesystem: { workspace: "read" } });
    const finished = all.find((r) => r.type === "tool.finished")!;
    assert.is((finished.data as { status: string }).status, "ok", JSON.stringify(all.map((r) => [r.type, r.data])));
    const result = all.find((r) => r.type === "tool.result")!.data as { outcome: { status: string; value: { path: string; depth: number } } };
    assert.is(result.outcome.value.path, "src/lib.rs");
    assert.is(result.outcome.value.depth, 2, "parsed options reach the component");

    // Admission is cached on the Component object: a second session reads and sends no bytes
    // (the file is gone, so reading it would fail).
    rmSync(wasm);
    const second = await brain.sessions.create({ model: script, tools: [inspect({ env: reader, depth: 1 })] });
    assert.is(await second.send("again"), "inspected");
  } finally {
    await brain.close();
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("bytes that are not a brain:tool component are refused at session creation, naming the problem", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-sdk-component-"));
  const runtime = await startBrain({ dataDir: join(dir, "data"), port: 0 });
  const brain = new Brain({ url: runtime.url, token: runtime.token });
  try {
    const junk = join(dir, "junk.wasm");
    writeFileSync(junk, new Uint8Array([0, 97, 115, 109, 1, 2, 3, 4, 5]));
    const bad = inspectTool(pathToFileURL(junk));
    await brain.sessions.create({ model: scripted({ text: "x" }), tools: [bad({ env: brainEnv({ name: "reader" }), depth: 1 })] }).then(
      () => assert.unreachable("admitted junk"),
      (e) => {
        assert.instance(e, ProtocolError);
        assert.match(e.message, "was refused");
      },
    );
    assert.is((bad.tool.implementation as { admittedDigest?: string }).admittedDigest, undefined, "a refusal is not cached");
  } finally {
    await brain.close();
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
