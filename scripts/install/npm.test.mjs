// Installs the packages as a user does: `npm pack` of the five publishable workspaces (their
// prepack builds them; no prior build is needed), `npm install --offline` of the tarballs in a new
// project outside the repository, then what sdk-node/README.md and runtime/README.md tell a user to
// run there: `npx @aexhq/brain-runtime serve`, a strict TypeScript app (nodenext and bundler module
// resolution) running a scripted session against it, and `npx brain-conformance --subject node`.
// A publisher's package of tools (examples/packaged-tools, built with tsc + brain-tools by its
// prepack) is packed and installed there too, and its tools are imported and used from it.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  PUBLISHED, betterSqlitePrebuilds, installTarballs, manifestTargets, newProject, pinnedOverrides, packFolders, packWorkspaces, root, run, tempDir, thirdPartyClosure, watchOutput,
} from "./pack.mjs";

const TOKEN = "install-test-token";
const npx = process.platform === "win32" ? "npx.cmd" : "npx";
let dir = "";
let app = "";
let packed = {};

/** A publisher's package of tools (examples/packaged-tools: its prepack runs tsc, then brain-tools). */
const TOOLS_PACKAGE = "@aexhq/example-text-tools";
let toolsPack = { file: "", files: [] };

test.before(() => {
  dir = tempDir("brain-install-");
  packed = packWorkspaces([...Object.keys(PUBLISHED), "examples/packaged-tools"], join(dir, "packs"));
  toolsPack = packed[TOOLS_PACKAGE];
  delete packed[TOOLS_PACKAGE];
  // The user's other package, the SDK's peer zod, and the npm packages the published ones depend on
  // come along as tarballs of the versions this checkout's lockfile chose. (tsc, run below on the
  // app's folder, is this checkout's: it only reads the app's own node_modules.)
  const closure = thirdPartyClosure(Object.keys(PUBLISHED), ["zod"]);
  const deps = packFolders(closure, join(dir, "deps"));
  app = newProject(join(dir, "app"), { overrides: pinnedOverrides(closure) });
  installTarballs(app, [...Object.values(packed).map((p) => p.file), toolsPack.file, ...deps], betterSqlitePrebuilds(join(dir, "prebuilds")));
});

test.after(() => {
  if (dir && !process.env.BRAIN_KEEP_INSTALL_DIR) rmSync(dir, { recursive: true, force: true });
});

test("each tarball ships dist/, a README and a LICENSE, and every exports/types/bin target is in it", () => {
  assert.equal(Object.keys(packed).sort(), Object.values(PUBLISHED).sort());
  for (const [name, { files }] of Object.entries(packed)) {
    const manifest = JSON.parse(readFileSync(join(app, "node_modules", name, "package.json"), "utf8"));
    assert.ok(files.some((f) => f.startsWith("dist/") && f.endsWith(".js")), `${name} ships no dist/*.js`);
    for (const f of ["README.md", "LICENSE", "package.json"]) assert.ok(files.includes(f), `${name} ships no ${f}`);
    assert.not.ok(files.some((f) => f.startsWith("test/")), `${name} ships its tests`);
    for (const target of manifestTargets(manifest)) assert.ok(files.includes(target), `${name}: ${target} is named in package.json but not shipped`);
    assert.not.ok(manifest.private, `${name} is private`);
  }
});

/** `brain serve` from the installed package, in its own process group (as a terminal runs it). */
function serve(command, args, env = {}) {
  const child = spawn(command, args, { cwd: app, detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, BRAIN_PORT: "0", ...env } });
  const out = watchOutput(child);
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  return { child, out, exited };
}

/** Ctrl-C as a terminal sends it: SIGINT to every process of the foreground process group. */
const ctrlC = (child) => process.kill(-child.pid, "SIGINT");

test("npx @aexhq/brain-runtime serve starts with its SQLite journal in ./.brain and stops on Ctrl-C", async () => {
  const s = serve(npx, ["--offline", "@aexhq/brain-runtime", "serve"]);
  const [, url] = await s.out.waitFor(/brain listening on (http:\/\/\S+)/);
  assert.is((await fetch(`${url}/healthz`)).status, 200);
  // The session viewer's page and its static files ship in the package (dist/ui/assets), and the
  // journal's rules it shares with the runtime (dist/journal/journal-rules.js, emitted by tsc).
  assert.match(await (await fetch(`${url}/ui`)).text(), /name="credential"/);
  for (const [asset, mark] of [["app.js", /showSession/], ["session.js", /EventSource/], ["journal-rules.js", /class JournalRules/]]) {
    const page = await fetch(`${url}/ui/assets/${asset}`);
    assert.is(page.status, 200, asset);
    assert.match(await page.text(), mark);
  }
  assert.match(s.out.text(), /journal: .*\.brain\/journal\.sqlite/);
  assert.ok(existsSync(join(app, ".brain/operator.token")));
  ctrlC(s.child);
  await s.exited;
  assert.match(s.out.text(), /brain: stopped/);
});

test("the installed bin, Ctrl-C many times: 'stopped' every time, exit code 0, the journal intact", async () => {
  const bin = join(app, "node_modules/.bin/brain");
  const dataDir = join(dir, "ctrl-c-data");
  for (let i = 0; i < 6; i++) {
    const s = serve(bin, ["serve"], { BRAIN_DATA_DIR: dataDir, BRAIN_TOKEN: TOKEN });
    const [, url] = await s.out.waitFor(/brain listening on (http:\/\/\S+)/);
    // Something to flush: a session (a journal commit) right before the signal.
    const res = await fetch(`${url}/v1/sessions`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify({ model: { provider: "scripted", script: [{ text: "hi" }] }, tools: [] }) });
    assert.is(res.status, 201, await res.clone().text());
    ctrlC(s.child);
    const { code, signal } = await s.exited;
    assert.match(s.out.text(), /brain: SIGINT, shutting down\n[^]*brain: stopped/, `run ${i}: ${s.out.text()}`);
    assert.equal({ code, signal }, { code: 0, signal: null }, `run ${i}: ${s.out.text()}`);
  }
  // The journal opens and checks clean with the installed better-sqlite3, and holds all six sessions.
  const check = run(process.execPath, ["-e", `
    const Database = require("better-sqlite3");
    const db = new Database(${JSON.stringify(join(dataDir, "journal.sqlite"))}, { readonly: true });
    console.log(JSON.stringify({ integrity: db.pragma("integrity_check", { simple: true }) }));
  `], app);
  assert.equal(JSON.parse(check), { integrity: "ok" });
  const again = serve(bin, ["serve"], { BRAIN_DATA_DIR: dataDir, BRAIN_TOKEN: TOKEN });
  const [, url] = await again.out.waitFor(/brain listening on (http:\/\/\S+)/);
  const list = await (await fetch(`${url}/v1/sessions`, { headers: { authorization: `Bearer ${TOKEN}` } })).json();
  ctrlC(again.child);
  await again.exited;
  assert.is(list.sessions.length, 6);
});

test("the installed brain: --help and serve --help exit 0, an unknown flag exits 2 naming it, and serve --port/--data-dir/--journal listen there and print the /ui URL and the export lines", async () => {
  const bin = join(app, "node_modules/.bin/brain");
  const help = spawnSync(bin, ["--help"], { cwd: app, encoding: "utf8" });
  assert.is(help.status, 0, help.stderr);
  assert.match(help.stdout, /^usage: brain <command>/);
  const serveHelp = spawnSync(bin, ["serve", "--help"], { cwd: app, encoding: "utf8" });
  assert.is(serveHelp.status, 0, serveHelp.stderr);
  for (const flag of ["--port", "--host", "--data-dir", "--journal"]) assert.match(serveHelp.stdout, `  ${flag} `);
  const unknown = spawnSync(bin, ["serve", "--prot", "3211"], { cwd: app, encoding: "utf8" });
  assert.is(unknown.status, 2, unknown.stdout + unknown.stderr);
  assert.match(unknown.stderr, "brain: unknown flag --prot (did you mean --port?)");
  const dataDir = join(dir, "flags-data");
  const s = serve(bin, ["serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir, "--journal", "sqlite"], { BRAIN_PORT: "1" });
  try {
    const [, url] = await s.out.waitFor(/brain listening on (http:\/\/\S+)/);
    await s.out.waitFor(/export BRAIN_TOKEN=.*\n/);
    assert.match(s.out.text(), `session viewer: ${url}/ui\n`);
    assert.match(s.out.text(), `  export BRAIN_URL=${url}\n`);
    assert.match(s.out.text(), `  export BRAIN_TOKEN=$(cat ${join(dataDir, "operator.token")})\n`);
    assert.ok(existsSync(join(dataDir, "journal.sqlite")), "the journal is in --data-dir");
    assert.is((await fetch(`${url}/ui`)).status, 200);
  } finally {
    ctrlC(s.child);
    await s.exited;
  }
});

test("the installed brain-conformance: --help is real help (exit 0), and the package ships the contract/PROTOCOL.md its README links", () => {
  const help = spawnSync(join(app, "node_modules/.bin/brain-conformance"), ["--help"], { cwd: app, encoding: "utf8" });
  assert.is(help.status, 0, help.stderr);
  assert.match(help.stdout, /^usage: brain-conformance --subject <subject> \[options\]/);
  assert.match(help.stdout, "--connect-timeout <ms>");
  const pkg = join(app, "node_modules/@aexhq/brain-conformance");
  const readme = readFileSync(join(pkg, "README.md"), "utf8");
  assert.not.match(readme, "](../contract/", "a link out of the package");
  const links = [...readme.matchAll(/\]\((contract\/[^)#]+)/g)].map((m) => m[1]);
  assert.ok(links.includes("contract/PROTOCOL.md"), "the README links contract/PROTOCOL.md");
  for (const link of links) assert.ok(existsSync(join(pkg, link)), `${link} is linked but not shipped`);
  assert.match(readFileSync(join(pkg, "contract/PROTOCOL.md"), "utf8"), /## Implementing a host binding/);
});

const APP_TS = `
import { Brain, tool } from "@aexhq/brain";
import { z } from "zod";

export const lookup = tool({
  name: "lookup",
  description: "Look up one record.",
  input: z.object({ id: z.string() }),
  output: z.object({ value: z.string() }).nullable(),
  options: z.object({ prefix: z.string() }),
  run: async ({ id }, ctx) => {
    await ctx.emit("lookup_started", { id });
    return ctx.finish({ value: \`\${ctx.options.prefix}\${id}\` });
  },
});

const brain = new Brain(); // BRAIN_URL and BRAIN_TOKEN
try {
  const session = await brain.sessions.create({
    model: { provider: "scripted", script: [{ toolCalls: [{ name: "lookup", input: { id: "42" } }] }, { text: "Found it." }] },
    tools: [lookup({ prefix: "customer:" })],
  });
  const reply = await session.send("Who is customer 42?");
  let outcome: unknown = null;
  for await (const record of session.events()) if (record.type === "tool.result") outcome = record.data.outcome;
  console.log(JSON.stringify({ reply, outcome }));
} finally {
  await brain.close();
}
`;

const tsconfig = (moduleResolution, extra = {}) => ({
  compilerOptions: {
    target: "ES2022", module: moduleResolution === "Bundler" ? "ESNext" : "NodeNext", moduleResolution,
    strict: true, skipLibCheck: false, lib: ["ES2023", "DOM"], types: [], outDir: "out", ...extra,
  },
  files: ["app.ts"],
});

test("a strict TypeScript app (nodenext and bundler resolution) declares a tool and runs a scripted session against it", async () => {
  writeFileSync(join(app, "app.ts"), APP_TS);
  writeFileSync(join(app, "tsconfig.json"), JSON.stringify(tsconfig("NodeNext"), null, 2));
  writeFileSync(join(app, "tsconfig.bundler.json"), JSON.stringify(tsconfig("Bundler", { noEmit: true }), null, 2));
  const tsc = join(root, "node_modules/typescript/bin/tsc");
  run(process.execPath, [tsc, "-p", "tsconfig.json"], app);
  run(process.execPath, [tsc, "-p", "tsconfig.bundler.json"], app);
  const s = serve(join(app, "node_modules/.bin/brain"), ["serve"], { BRAIN_JOURNAL: "memory", BRAIN_TOKEN: TOKEN });
  try {
    const [, url] = await s.out.waitFor(/brain listening on (http:\/\/\S+)/);
    const out = JSON.parse(run(process.execPath, ["out/app.js"], app, { BRAIN_URL: url, BRAIN_TOKEN: TOKEN }));
    assert.is(out.reply, "Found it.");
    assert.equal(out.outcome, { status: "ok", value: { value: "customer:42" } });
  } finally {
    ctrlC(s.child);
    await s.exited;
  }
});

test("README.md's first code sample, as it stands, type-checks strictly and runs against the installed packages", async () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Writing tools with the Node SDK"));
  const sample = /```ts\n([^]*?)```/.exec(section)?.[1];
  assert.ok(sample?.includes("new Brain()"), "the README's first ts sample was not found");
  writeFileSync(join(app, "readme.ts"), sample);
  writeFileSync(join(app, "tsconfig.readme.json"), JSON.stringify({ ...tsconfig("NodeNext", { outDir: "out-readme" }), files: ["readme.ts"] }, null, 2));
  run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.readme.json"], app);
  const s = serve(join(app, "node_modules/.bin/brain"), ["serve"], { BRAIN_JOURNAL: "memory", BRAIN_TOKEN: TOKEN });
  try {
    const [, url] = await s.out.waitFor(/brain listening on (http:\/\/\S+)/);
    // The message's answer, then what session.idle() gives: every answer since (here the same turn's).
    assert.is(run(process.execPath, ["out-readme/readme.js"], app, { BRAIN_URL: url, BRAIN_TOKEN: TOKEN }).trim(), "Found it.\nmessage Found it.");
  } finally {
    ctrlC(s.child);
    await s.exited;
  }
});

test("npx brain-conformance --subject node passes with the installed packages", () => {
  const out = run(npx, ["--offline", "brain-conformance", "--subject", "node"], app);
  assert.match(out, /^\d+ passed, 0 failed/m, out);
  assert.not.match(out, /FAIL/);
});

const PACKAGED_MJS = `
import { Brain } from "@aexhq/brain";
import { countWords, slugify } from "@aexhq/example-text-tools";
import manifest from "@aexhq/example-text-tools/brain-tools.json" with { type: "json" };

// Each reference, resolved from here as another process would, gives the same factory.
const resolved = [];
for (const { executable } of manifest.tools) {
  const specifier = executable.module === "." ? executable.package : executable.package + executable.module.slice(1);
  resolved.push((await import(specifier))[executable.export] === (executable.export === "countWords" ? countWords : slugify));
}
const brain = new Brain(); // BRAIN_URL and BRAIN_TOKEN
try {
  const session = await brain.sessions.create({
    model: { provider: "scripted", script: [{ toolCalls: [{ name: "count_words", input: { text: "one two three" } }, { name: "slugify", input: { title: "Hello, Packaged World" } }] }, { text: "Done." }] },
    tools: [countWords(), slugify({ separator: "_" })],
  });
  const reply = await session.send("Count and slugify.");
  const outcomes = [];
  for await (const record of session.events()) if (record.type === "tool.result") outcomes.push(record.data.outcome);
  console.log(JSON.stringify({
    executables: [countWords.executable, slugify.executable], placed: slugify().executable, resolved, manifest,
    contracts: [await countWords.tool.contract(), await slugify.tool.contract()], reply, outcomes,
  }));
} finally {
  await brain.close();
}
`;

// TypeScript sees the reference on the installed package's factories (its .d.ts, the SDK's types).
const PACKAGED_TS = `
import type { ExecutableReference } from "@aexhq/brain";
import { countWords, slugify } from "@aexhq/example-text-tools";
const refs: (ExecutableReference | undefined)[] = [countWords.executable, slugify({ separator: "_" }).executable];
export const names: (string | undefined)[] = refs.map((r) => r?.export);
// @ts-expect-error the reference is readonly
countWords.executable = undefined;
`;

test("a package of tools built with tsc + brain-tools, installed from its tarball: imported factories carry their executable references and run in a session", async () => {
  // The tarball ships the build with its manifest (and no sources).
  for (const f of ["dist/index.js", "dist/index.d.ts", "dist/count-words.js", "dist/slugify.js", "dist/brain-tools.json", "package.json"]) assert.ok(toolsPack.files.includes(f), `${TOOLS_PACKAGE} does not ship ${f}`);
  assert.not.ok(toolsPack.files.some((f) => f.startsWith("src/")), `${TOOLS_PACKAGE} ships its sources`);
  writeFileSync(join(app, "packaged.mjs"), PACKAGED_MJS);
  writeFileSync(join(app, "packaged.ts"), PACKAGED_TS);
  writeFileSync(join(app, "tsconfig.packaged.json"), JSON.stringify({ ...tsconfig("NodeNext", { noEmit: true }), files: ["packaged.ts"] }, null, 2));
  run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.packaged.json"], app);
  const s = serve(join(app, "node_modules/.bin/brain"), ["serve"], { BRAIN_JOURNAL: "memory", BRAIN_TOKEN: TOKEN });
  try {
    const [, url] = await s.out.waitFor(/brain listening on (http:\/\/\S+)/);
    const out = JSON.parse(run(process.execPath, ["packaged.mjs"], app, { BRAIN_URL: url, BRAIN_TOKEN: TOKEN }));
    const ref = (name) => ({ package: TOOLS_PACKAGE, version: "0.2.0", module: ".", export: name });
    assert.equal(out.executables, [ref("countWords"), ref("slugify")]);
    assert.equal(out.placed, ref("slugify"));
    assert.equal(out.resolved, [true, true]);
    assert.is(out.manifest.manifestVersion, 1);
    assert.equal(out.manifest.tools.map((t) => t.executable), [ref("countWords"), ref("slugify")]);
    assert.equal(out.manifest.tools.map((t) => t.contract), out.contracts);
    assert.is(out.reply, "Done.");
    // The two calls run concurrently: their results may commit in either order.
    assert.equal(out.outcomes.map((o) => JSON.stringify(o)).sort(), [{ status: "ok", value: { slug: "hello_packaged_world" } }, { status: "ok", value: { words: 3 } }].map((o) => JSON.stringify(o)));
  } finally {
    ctrlC(s.child);
    await s.exited;
  }
});

const DENO_MAIN = `
import { Brain, tool } from "@aexhq/brain";
import { z } from "zod";

const lookup = tool({
  name: "lookup",
  description: "Look up one record.",
  input: z.object({ id: z.string() }),
  output: z.object({ value: z.string() }),
  options: z.object({ prefix: z.string() }),
  run: async ({ id }, ctx) => ctx.finish({ value: \`\${ctx.options.prefix}\${id}\` }),
});

const brain = new Brain(); // BRAIN_URL and BRAIN_TOKEN
try {
  const session = await brain.sessions.create({
    model: { provider: "scripted", script: [{ toolCalls: [{ name: "lookup", input: { id: "42" } }] }, { text: "Found it." }] },
    tools: [lookup({ prefix: "customer:" })],
  });
  console.log(JSON.stringify({ reply: await session.send("Who is customer 42?") }));
} finally {
  await brain.close();
}
`;

const deno = join(root, "node_modules/deno/deno");
const SDK_ENV = "BRAIN_URL,BRAIN_TOKEN,BRAIN_HOST_ID,BRAIN_HOST_SECRET";

test("Deno: a project of its own (deno.json, npm install of the packed SDK) runs a session with the documented minimal permissions, without ws", async () => {
  const project = newProject(join(dir, "deno-app"));
  writeFileSync(join(project, "deno.json"), JSON.stringify({ nodeModulesDir: "manual" }, null, 2));
  const sdk = ["@aexhq/brain", "@aexhq/brain-core", "@aexhq/brain-protocol"].map((n) => packed[n].file);
  installTarballs(project, [...sdk, ...packFolders(thirdPartyClosure(["sdk-node"], ["zod"]), join(dir, "deno-deps"))]);
  writeFileSync(join(project, "main.ts"), DENO_MAIN);
  const denoEnv = { DENO_DIR: join(dir, "deno-dir"), DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" };
  // The `deno` export condition: Deno's own WebSocket, no ws in the module graph.
  const graph = JSON.parse(run(deno, ["info", "--json", "main.ts"], project, denoEnv));
  const files = JSON.stringify(graph);
  assert.match(files, /@aexhq\/brain\/dist\/deno\/mod\.js/);
  assert.not.match(files, /node_modules\/ws\//);
  const s = serve(join(app, "node_modules/.bin/brain"), ["serve"], { BRAIN_JOURNAL: "memory", BRAIN_TOKEN: TOKEN });
  try {
    const [, url] = await s.out.waitFor(/brain listening on (http:\/\/\S+)/);
    const host = new URL(url).host;
    const out = run(deno, ["run", "--quiet", `--allow-net=${host}`, `--allow-env=${SDK_ENV}`, "main.ts"], project, { ...denoEnv, BRAIN_URL: url, BRAIN_TOKEN: TOKEN });
    assert.equal(JSON.parse(out), { reply: "Found it." });
    // Without --allow-env, a set BRAIN_TOKEN is unreadable, and the error says which permission to add.
    let failure = "";
    try {
      run(deno, ["run", "--quiet", `--allow-net=${host}`, "main.ts"], project, { ...denoEnv, BRAIN_URL: url, BRAIN_TOKEN: TOKEN });
    } catch (e) {
      failure = String(e.stderr);
    }
    assert.match(failure, /no Brain token/);
    assert.match(failure, /--allow-env=BRAIN_TOKEN/);
  } finally {
    ctrlC(s.child);
    await s.exited;
  }
});

test.run();
