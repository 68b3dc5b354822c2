// Packaged tools in Brain-managed hosts through the SDK: the example package (installed in this
// checkout as a workspace, built by its prepack with tsc + brain-tools) imported like an application
// imports it, placed with brainEnv({ runtime: "node" | "deno" }); the SDK packs the installed
// package with its dependencies, uploads it by digest (HEAD, then PUT, once per server) and places
// it managed; a real runtime starts real node / deno hosts and the scripted model calls the tools.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { Brain, SdkError, brainEnv, tool } from "../src/index.ts";
import { packInstalled } from "../src/packages.ts";
import { callThenAnswer, memoryRuntime, records, type Runtime } from "./helpers/brain.mts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const EXAMPLE = "@aexhq/example-text-tools";

/** Newest mtime under `dir` (sources only), as scripts/prepack.mjs decides staleness. */
function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === "node_modules" || e.name === "dist" || e.name === "test" || e.name.startsWith(".")) continue;
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}
const built = (dir: string) => existsSync(join(dir, "dist")) && readdirSync(join(dir, "dist")).length > 0 && statSync(join(dir, "dist")).mtimeMs >= newest(dir);

let runtime: Runtime;
let example: Record<string, any>;
// Requests to /v1/packages/*, by method, seen by fetch in this process (the SDK's uploads).
const seen: string[] = [];

test.before(async () => {
  // The installed example must be built (dist/ with the brain-tools blocks), as must the SDK copy it
  // ships with; its prepack builds the stale ones (a fresh clone's `npm test` has built them before).
  if (!["generated", "sdk-core", "sdk-node", "examples/packaged-tools"].every((w) => built(join(root, w)))) {
    execFileSync("node", [join(root, "scripts/prepack.mjs")], { cwd: join(root, "examples/packaged-tools"), stdio: ["ignore", "inherit", "inherit"], timeout: 300_000 });
  }
  process.env.BRAIN_DENO ??= join(root, "node_modules/.bin/deno");
  example = await import(EXAMPLE);
  runtime = await memoryRuntime();
  const original = globalThis.fetch;
  globalThis.fetch = ((input: string | URL | Request, init?: RequestInit) => {
    const url = String(input instanceof Request ? input.url : input);
    if (url.includes("/v1/packages/")) seen.push(`${init?.method ?? "GET"} ${new URL(url).host}`);
    return original(input, init);
  }) as typeof fetch;
});

test.after(async () => {
  await runtime?.close();
});

async function roundTrip(brain: Brain, runtimeName: "node" | "deno") {
  const env = brainEnv({ name: `text-${runtimeName}`, runtime: runtimeName });
  const session = await brain.sessions.create({
    model: callThenAnswer([{ name: "count_words", input: { text: "one two  three" } }, { name: "slugify", input: { title: "Héllo, Managed World" } }]),
    tools: [example.countWords({ env }), example.slugify({ env, separator: "_" })],
  });
  const answer = await session.send("go");
  assert.is(answer, "done");
  // slugify finishes (ctx.finish); its tool.finished may follow its result a moment later.
  // count_words returns without finishing, so its call stays open.
  let all = await records(session);
  for (let i = 0; i < 200 && !all.some((r) => r.type === "tool.finished"); i++) {
    await new Promise((r) => setTimeout(r, 25));
    all = await records(session);
  }
  const results = Object.fromEntries(all.flatMap((r) => (r.type === "tool.result" ? [[r.data.callId, r.data.outcome]] : [])));
  const started = all.flatMap((r) => (r.type === "tool.call_started" ? [r.data] : []));
  assert.equal(started.map((c) => [c.tool, results[c.callId]]), [
    ["count_words", { status: "ok", value: { words: 3 } }],
    ["slugify", { status: "ok", value: { slug: "hello_managed_world" } }],
  ]);
  assert.equal(all.flatMap((r) => (r.type === "tool.event" ? [[r.data.kind, r.data.data]] : [])), [["slugified", { words: 3 }]]);
  assert.equal(all.flatMap((r) => (r.type === "tool.finished" ? [[r.data.callId, r.data.status]] : [])), [[started[1]!.callId, "ok"]]);
  // The session placed them managed, with the executable references brain-tools recorded.
  const view = (await (await fetch(`${runtime.url}/v1/sessions/${session.id}`, { headers: { authorization: `Bearer ${runtime.token}` } })).json()) as { tools: Array<{ placement: any }> };
  assert.equal(view.tools.map((t) => [t.placement.kind, t.placement.runtime, t.placement.executable.export]), [["managed", runtimeName, "countWords"], ["managed", runtimeName, "slugify"]]);
}

for (const runtimeName of ["node", "deno"] as const) {
  test(`the installed example placed with brainEnv({ runtime: "${runtimeName}" }) answers, emits and finishes`, async () => {
    const brain = new Brain({ url: runtime.url, token: runtime.token });
    try {
      await roundTrip(brain, runtimeName);
    } finally {
      await brain.close();
    }
  });
}

test("the package is uploaded once per server (HEAD + PUT on a new server, nothing on later sessions)", async () => {
  const host = (r: Runtime) => new URL(r.url).host;
  // Earlier tests admitted it on `runtime`: another session there sends nothing.
  const brain = new Brain({ url: runtime.url, token: runtime.token });
  const other = await memoryRuntime();
  const brain2 = new Brain({ url: other.url, token: other.token });
  try {
    seen.length = 0;
    const env = brainEnv({ name: "again", runtime: "node" });
    await brain.sessions.create({ model: callThenAnswer([]), tools: [example.countWords({ env })] });
    assert.equal(seen, []);
    await brain2.sessions.create({ model: callThenAnswer([]), tools: [example.countWords({ env })] });
    await brain2.sessions.create({ model: callThenAnswer([]), tools: [example.slugify({ env })] });
    assert.equal(seen, [`HEAD ${host(other)}`, `PUT ${host(other)}`]);
  } finally {
    await brain.close();
    await brain2.close();
    await other.close();
  }
});

test("the upload: npm pack layout, the package's files and run-time dependencies, the same bytes each time", async () => {
  const ref = example.slugify.executable;
  assert.equal(ref, { package: EXAMPLE, version: "0.2.0", module: ".", export: "slugify" });
  const a = await packInstalled(ref);
  const b = await packInstalled(ref);
  assert.is(a.digest, b.digest);
  const dir = mkdtempSync(join(tmpdir(), "brain-upload-"));
  const file = join(dir, "upload.tgz");
  writeFileSync(file, a.bytes);
  const names = execFileSync("tar", ["-tzf", file], { encoding: "utf8" }).trim().split("\n");
  rmSync(dir, { recursive: true, force: true });
  assert.ok(names.every((n) => n.startsWith("package/")));
  for (const n of ["package/package.json", "package/dist/index.js", "package/dist/brain-tools.json", "package/node_modules/@aexhq/brain/package.json", "package/node_modules/@aexhq/brain/dist/index.js", "package/node_modules/@aexhq/brain-core/package.json", "package/node_modules/zod/package.json"]) {
    assert.ok(names.includes(n), `${n} in the upload`);
  }
  // Not shipped: the example's sources (files: ["dist", "README.md"]), dev and optional peer dependencies.
  assert.not.ok(names.some((n) => n.startsWith("package/src/")));
  assert.not.ok(names.some((n) => n.includes("node_modules/ts-morph/") || n.includes("node_modules/typescript/")));
});

test("a tool without an executable reference in a managed brainEnv: TypeError naming brain-tools", () => {
  const local = tool({ name: "local", description: "d", input: z.object({}), run: async () => ({}) });
  assert.throws(() => local({ env: brainEnv({ name: "x", runtime: "node" }) }), (e: Error) => e instanceof TypeError && /brain-tools/.test(e.message) && /runtime node/.test(e.message));
});

test("a package that is not installed: SdkError naming it, at session creation", async () => {
  const missing = tool({ name: "missing", description: "d", input: z.object({}), run: async () => ({}) });
  Object.defineProperty(missing, "executable", { value: Object.freeze({ package: "@nowhere/not-installed-tools", version: "1.0.0", module: ".", export: "missing" }) });
  const brain = new Brain({ url: runtime.url, token: runtime.token });
  try {
    await brain.sessions.create({ model: callThenAnswer([]), tools: [missing({ env: brainEnv({ name: "x", runtime: "deno" }) })] });
    assert.unreachable("created");
  } catch (e) {
    assert.instance(e, SdkError);
    assert.is((e as SdkError).code, "package_not_installed");
    assert.match((e as Error).message, /@nowhere\/not-installed-tools/);
  } finally {
    await brain.close();
  }
});

test("brainEnv: runtime is node or deno", () => {
  assert.equal(brainEnv({ name: "a", runtime: "deno", filesystem: { workspace: "read" } }), { kind: "brain", name: "a", filesystem: { workspace: "read" }, runtime: "deno" });
  assert.throws(() => brainEnv({ name: "a", runtime: "python" as "node" }), /runtime must be "node" or "deno"/);
});

test.run();
