// brain-tools, the publishing helper, on real packages: each is written to a temporary folder outside
// the repository (package.json, TypeScript sources, node_modules linking this checkout's SDK and zod),
// built with the real tsc, and the CLI runs in it as a publisher runs it (real ts-morph, the built
// modules imported). The manifest and the executable references are then checked by importing the
// built package here, and the mistakes a publisher makes exit 2 with a message naming file and export.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { tool } from "../src/index.ts";
import { z } from "zod";

const root = fileURLToPath(new URL("../..", import.meta.url));
const CLI = join(root, "sdk-node/src/brain-tools/cli.ts");
const TSX = join(root, "node_modules/tsx/dist/loader.mjs");
const TSC = join(root, "node_modules/typescript/bin/tsc");
let dir = "";

test.before(() => {
  dir = mkdtempSync(join(realpathSync(tmpdir()), "brain-tools-"));
  // The packages' tsc reads @aexhq/brain's types from its dist/ (as a publisher's does); a fresh
  // clone has none until something builds it.
  if (!existsSync(join(root, "sdk-node/dist/index.d.ts"))) execFileSync("npm", ["run", "--silent", "prepack"], { cwd: join(root, "sdk-node"), stdio: "ignore" });
});
test.after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const TSCONFIG = {
  compilerOptions: {
    target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, declaration: true, sourceMap: true,
    rewriteRelativeImportExtensions: true, verbatimModuleSyntax: true, skipLibCheck: true, types: [], rootDir: "src", outDir: "dist",
  },
  include: ["src/**/*.ts"],
};

/** A package folder with `files` (path -> text), node_modules linking this checkout's SDK and zod, built with tsc when it has sources. */
function makePackage(name: string, pkg: Record<string, unknown> | undefined, files: Record<string, string>, build = true): string {
  const p = join(dir, name);
  mkdirSync(join(p, "node_modules/@aexhq"), { recursive: true });
  symlinkSync(join(root, "sdk-node"), join(p, "node_modules/@aexhq/brain"), "dir");
  symlinkSync(realpathSync(join(root, "node_modules/zod")), join(p, "node_modules/zod"), "dir");
  if (pkg) writeFileSync(join(p, "package.json"), JSON.stringify(pkg, null, 2));
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(dirname(join(p, f)), { recursive: true });
    writeFileSync(join(p, f), text);
  }
  if (build && Object.keys(files).some((f) => f.endsWith(".ts"))) {
    writeFileSync(join(p, "tsconfig.json"), JSON.stringify(TSCONFIG, null, 2));
    execFileSync(process.execPath, [TSC, "-p", "tsconfig.json"], { cwd: p, encoding: "utf8" });
  }
  return p;
}

/** `brain-tools [args]` in `cwd`, as the bin runs it (from the sources here). */
function brainTools(cwd: string, ...args: string[]) {
  const r = spawnSync(process.execPath, ["--conditions=brain-source", "--import", TSX, CLI, ...args], { cwd, encoding: "utf8", timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const readJson = (p: string) => JSON.parse(readFileSync(p, "utf8"));

const LOOKUP = `import { tool } from "@aexhq/brain";
import { z } from "zod";

export const lookup = tool({
  name: "lookup",
  description: "Look up one record.",
  input: z.object({ id: z.string() }),
  output: z.object({ value: z.string() }).nullable(),
  options: z.object({ prefix: z.string().default("customer:") }),
  run: async ({ id }, ctx) => ctx.finish({ value: ctx.options.prefix + id }),
});
`;
// An aliased import of tool, a local name that differs from the exported one, and an export that is no tool.
const ECHO = `import { tool as declare } from "@aexhq/brain";
import { z } from "zod";

const inner = declare({
  name: "echo",
  description: "Echo the text.",
  input: z.object({ text: z.string() }),
  run(input) {
    return { text: input.text };
  },
});
export { inner as echo };
export const notATool = { name: "echo" };
`;
// A namespace import and a default export, at its own subpath; it re-exports lookup too.
const EXTRA = `import * as brain from "@aexhq/brain";
import { z } from "zod";

export { lookup } from "./lookup.ts";
export default brain.tool({
  name: "shout",
  description: "Upper-case the text.",
  input: z.object({ text: z.string() }),
  output: z.object({ text: z.string() }),
  run: async ({ text }) => ({ text: text.toUpperCase() }),
});
`;

test("a built package: every exported run tool in brain-tools.json with the SDK's own contract, and each imported factory carries its reference", async () => {
  const p = makePackage("tools-ok", {
    name: "@acme/tools", version: "1.4.2", type: "module",
    exports: {
      ".": { types: "./dist/index.d.ts", default: "./dist/index.js" },
      "./extra": { types: "./dist/extra.d.ts", import: "./dist/extra.js" },
      "./package.json": "./package.json",
    },
    files: ["dist"],
  }, {
    "src/lookup.ts": LOOKUP,
    "src/echo.ts": ECHO,
    "src/extra.ts": EXTRA,
    "src/index.ts": `export { lookup } from "./lookup.ts";\nexport * from "./echo.ts";\nexport const version = 3;\n`,
  });
  const r = brainTools(p);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stderr, "");
  assert.match(r.stdout, /@acme\/tools@1\.4\.2: 3 tools in dist\/brain-tools\.json/);
  assert.match(r.stdout, /shout: import \{ default as \.\.\. \} from "@acme\/tools\/extra"/);

  const manifest = readJson(join(p, "dist/brain-tools.json"));
  assert.is(manifest.manifestVersion, 1);
  assert.is(manifest.package, "@acme/tools");
  assert.is(manifest.version, "1.4.2");
  const ref = (module: string, name: string) => ({ package: "@acme/tools", version: "1.4.2", module, export: name });
  assert.equal(manifest.tools.map((t: { contract: { name: string } }) => t.contract.name), ["echo", "lookup", "shout"]);
  assert.equal(manifest.tools.map((t: { executable: unknown }) => t.executable), [ref(".", "echo"), ref(".", "lookup"), ref("./extra", "default")]);
  assert.equal(manifest.tools.map((t: { file: string }) => t.file), ["dist/echo.js", "dist/lookup.js", "dist/extra.js"]);

  // Imported as a user imports them: the factories carry their references, placements too, and the
  // manifest's contracts are exactly what those factories advertise.
  const main = await import(pathToFileURL(join(p, "dist/index.js")).href);
  const extra = await import(pathToFileURL(join(p, "dist/extra.js")).href);
  assert.equal(main.lookup.executable, ref(".", "lookup"));
  assert.is(extra.lookup, main.lookup); // one tool, referenced by its first export
  assert.equal(main.echo.executable, ref(".", "echo"));
  assert.equal(extra.default.executable, ref("./extra", "default"));
  assert.ok(Object.isFrozen(main.lookup.executable));
  assert.throws(() => { main.lookup.executable = ref(".", "x"); }, TypeError);
  assert.equal(main.lookup({ prefix: "p:" }).executable, ref(".", "lookup"));
  assert.is(main.notATool.executable, undefined);
  for (const [t, factory] of [[manifest.tools[0], main.echo], [manifest.tools[1], main.lookup], [manifest.tools[2], extra.default]]) {
    assert.equal(t.contract, await factory.tool.contract());
  }
  // A tool declared in an application has no reference.
  const local = tool({ name: "local", description: "d", input: z.object({}), run: () => null });
  assert.is(local.executable, undefined);
  assert.is(local().executable, undefined);

  // The reference sits before tsc's source-map comment, which stays last; a second run changes nothing.
  const built = readFileSync(join(p, "dist/lookup.js"), "utf8");
  assert.match(built, /Object\.defineProperty\(lookup, "executable"[^\n]*\n\/\/ brain-tools: end\n\/\/# sourceMappingURL=lookup\.js\.map$/);
  assert.match(readFileSync(join(p, "dist/echo.js"), "utf8"), /Object\.defineProperty\(inner, "executable"/);
  assert.match(readFileSync(join(p, "dist/extra.js"), "utf8"), /import __brainToolsDefault from "\.\/extra\.js";\nObject\.defineProperty\(__brainToolsDefault, "executable"/);
  const before = ["lookup.js", "echo.js", "extra.js", "index.js", "brain-tools.json"].map((f) => readFileSync(join(p, "dist", f), "utf8"));
  const again = brainTools(p);
  assert.is(again.code, 0, again.stderr);
  assert.equal(["lookup.js", "echo.js", "extra.js", "index.js", "brain-tools.json"].map((f) => readFileSync(join(p, "dist", f), "utf8")), before);

  // --out, and a package folder given as an argument.
  const out = brainTools(dir, "tools-ok", "--out", join(p, "manifest.json"));
  assert.is(out.code, 0, out.stderr);
  assert.equal(readJson(join(p, "manifest.json")), manifest);
  assert.match(out.stderr, /note: manifest\.json is not in package\.json "files"/);
});

test("no package.json: exit 2, and it says where it looked", () => {
  const p = join(dir, "empty");
  mkdirSync(p);
  const r = brainTools(p);
  assert.is(r.code, 2);
  assert.match(r.stderr, new RegExp(`brain-tools: no package\\.json in ${p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
});

test("not built yet: exit 2 naming the export and the missing file", () => {
  const p = makePackage("unbuilt", { name: "unbuilt", version: "1.0.0", type: "module", exports: { ".": "./dist/index.js" } }, { "src/index.ts": LOOKUP }, false);
  const r = brainTools(p);
  assert.is(r.code, 2);
  assert.match(r.stderr, /exports "\." of unbuilt loads \.\/dist\/index\.js, which does not exist: run your build before brain-tools/);
});

test("a tool export without run, and two tools with one name: exit 2, each named by export and file:line", () => {
  const p = makePackage("tools-bad", { name: "bad-tools", version: "0.1.0", type: "module", main: "./dist/index.js" }, {
    "src/index.ts": `import { tool, brainEnv } from "@aexhq/brain";
import { z } from "zod";

export const fetchIssue = tool({
  name: "fetch_issue",
  description: "Fetch one issue.",
  input: z.object({ number: z.number().int() }),
  implementation: () => ({ type: "http_json", method: "GET", path: "/issues/{number}" }),
});
export const first = tool({ name: "dup", description: "One.", input: z.object({}), run: () => 1 });
export { second } from "./second.ts";
export const env = brainEnv({ name: "x" });
`,
    "src/second.ts": `import { tool } from "@aexhq/brain";
import { z } from "zod";

export const second = tool({ name: "dup", description: "Two.", input: z.object({}), run: () => 2 });
`,
  });
  const r = brainTools(p);
  assert.is(r.code, 2, r.stdout);
  assert.match(r.stderr, /export "fetchIssue" of "\." \(dist\/index\.js:3\) is tool "fetch_issue" without run/);
  assert.match(r.stderr, /two tools are named "dup": export "first" of "\." \(dist\/index\.js:9\) and export "second" of "\." \(dist\/second\.js:3\)/);
  assert.not.ok(existsSync(join(p, "dist/brain-tools.json")));
  assert.not.match(readFileSync(join(p, "dist/second.js"), "utf8"), /brain-tools/);
});

test.run();
