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
if (rustMissing) skipNotice(2, "sdk-node/test/component.test.ts", rustMissing);
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

(built ? test : test.skip)("a component admitted by one server is uploaded again to another, and to a restarted in-memory server at the same URL", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-sdk-component-"));
  const wasm = join(dir, "inspect.wasm");
  copyFileSync(built!.rust, wasm);
  const inspect = inspectTool(pathToFileURL(wasm));
  const placed = () => inspect({ env: brainEnv({ name: "reader" }), depth: 1 });
  const model = scripted({ text: "x" });
  const token = "component-reupload-token-0001";
  let first = await startBrain({ dataDir: ":memory:", port: 0, token });
  const second = await startBrain({ dataDir: ":memory:", port: 0, token });
  try {
    const a = new Brain({ url: first.url, token });
    await a.sessions.create({ model, tools: [placed()] });
    const b = new Brain({ url: second.url, token });
    const onSecond = await b.sessions.create({ model, tools: [placed()] });
    assert.ok(onSecond.id.startsWith("ses_"), "the second server got the bytes too");
    // The first server restarts in memory on the same port: it forgot the bytes; the client uploads again.
    const port = Number(new URL(first.url).port);
    await first.close();
    first = await startBrain({ dataDir: ":memory:", port, token });
    // fetch's pool may still hold a connection the old server closed; a GET takes that error, not the test.
    await fetch(`${first.url}/healthz`).catch(() => {});
    const again = await a.sessions.create({ model, tools: [placed()] });
    assert.ok(again.id.startsWith("ses_"));
    assert.equal([...(inspect.tool.implementation as { admittedBy?: Set<string> }).admittedBy!].sort(), [first.url, second.url].sort());
    await a.close();
    await b.close();
  } finally {
    await first.close();
    await second.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a server without the component environment answers unsupported through the SDK", async () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-sdk-component-"));
  const runtime = await startBrain({ dataDir: ":memory:", port: 0, components: false });
  const brain = new Brain({ url: runtime.url, token: runtime.token });
  try {
    const bytes = join(dir, "any.wasm");
    writeFileSync(bytes, new Uint8Array([0, 97, 115, 109, 13, 0, 1, 0]));
    const inspect = inspectTool(pathToFileURL(bytes));
    await brain.sessions.create({ model: scripted({ text: "x" }), tools: [inspect({ env: brainEnv({ name: "reader" }), depth: 1 })] }).then(
      () => assert.unreachable("a component placed on a server without components"),
      (e) => {
        assert.instance(e, ProtocolError);
        assert.is(e.code, "unsupported");
        assert.is(e.status, 400);
        assert.match(e.message, "without the component environment");
      },
    );
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
