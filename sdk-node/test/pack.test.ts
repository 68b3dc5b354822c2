// Builds @aexhq/brain-protocol, @aexhq/brain-core and @aexhq/brain, packs them, installs the
// tarballs in a clean temp project (offline: nothing from the registry) and uses them there from JS and TS.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, rmSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const run = (cmd: string, args: string[], cwd: string) => execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 180_000 });

let dir = "";
let ours: string[] = [];

test.before(() => {
  dir = mkdtempSync(join(tmpdir(), "brain-pack-"));
  const packs = join(dir, "packs");
  mkdirSync(packs);
  for (const ws of ["generated", "sdk-core", "sdk-node"]) {
    run(npm, ["run", "build"], join(root, ws));
    run(npm, ["pack", "--pack-destination", packs], join(root, ws));
  }
  // Their third-party dependencies (and zod, the peer) come as tarballs packed from this checkout's
  // node_modules: `npm ci` caches tarballs but not registry metadata, so an offline install of a
  // range like "zod@4" fails on a machine whose npm cache saw nothing but `npm ci`.
  // canonicalize is @aexhq/brain-protocol's (JCS digests).
  for (const dep of ["ws", "@sinclair/typebox", "canonicalize"]) run(npm, ["pack", "--pack-destination", packs], join(root, "node_modules", dep));
  ours = readdirSync(packs).filter((f) => f.endsWith(".tgz")).map((f) => join(packs, f));
  assert.is(ours.length, 6);
});

test.after(() => rmSync(dir, { recursive: true, force: true }));

/** A clean temp project with the packed SDK and the zod packed from `zodDir` (the peer a user brings). */
function app(name: string, zodDir: string): string {
  const zod = join(dir, `zod-${name}`);
  mkdirSync(zod);
  run(npm, ["pack", "--pack-destination", zod], zodDir);
  const project = join(dir, name);
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: `pack-check-${name}`, private: true, type: "module" }));
  run(npm, ["install", "--offline", "--no-audit", "--no-fund", ...ours, ...readdirSync(zod).map((f) => join(zod, f))], project);
  return project;
}

/** What a user does with the installed SDK, from JS (every schema shape the SDK converts) and from TS (the types). */
function useIt(project: string, zodVersion: string): void {
  const installed = JSON.parse(run(process.execPath, ["-e", "console.log(JSON.stringify(require('zod/package.json').version))"], project));
  assert.is(installed, zodVersion);
  writeFileSync(join(project, "check.mjs"), `
    import { tool, Brain, hostEnv, httpEnv, BrainError } from "@aexhq/brain";
    import { z } from "zod";
    import { createRequire } from "node:module";
    const t = tool({ name: "lookup", description: "d", input: z.object({ id: z.string() }), options: z.object({ prefix: z.string() }), run: async (i, ctx) => ctx.finish(ctx.options.prefix + i.id) });
    const placed = t({ prefix: "p:" });
    const contract = await t.tool.contract();
    // Input schemas are what Zod accepts before parsing: a defaulted field is optional, a transform's input type shows.
    const shapes = tool({
      name: "shapes", description: "d",
      input: z.object({
        n: z.number().default(1), s: z.string().transform((v) => v.length), u: z.union([z.string(), z.number()]),
        d: z.discriminatedUnion("k", [z.object({ k: z.literal("a") }), z.object({ k: z.literal("b"), v: z.number() })]),
        r: z.record(z.string(), z.number()), tu: z.tuple([z.string(), z.number()]), o: z.string().optional(), nu: z.string().nullable(),
      }),
      output: z.object({ ok: z.boolean() }),
      run: async () => ({ ok: true }),
    });
    const wit = createRequire(import.meta.url).resolve("@aexhq/brain/contracts/tool.wit");
    console.log(JSON.stringify({ digest: contract.digest, options: placed.options, brain: typeof Brain, env: hostEnv({ name: "app" }).kind, http: httpEnv({ url: "http://a.example/" }).kind, err: typeof BrainError, wit: wit.endsWith("tool.wit"), required: shapes.tool.inputSchema.required, parsed: await shapes.tool.input.parseAsync({ s: "abc", u: 1, d: { k: "a" }, r: {}, tu: ["x", 1], nu: null }) }));
  `);
  const out = JSON.parse(run(process.execPath, ["check.mjs"], project));
  assert.match(out.digest, /^[0-9a-f]{64}$/);
  assert.equal(out.options, { prefix: "p:" });
  assert.equal([out.brain, out.env, out.http, out.err, out.wit], ["function", "host", "http", "function", true]);
  assert.equal([...out.required].sort(), ["d", "nu", "r", "s", "tu", "u"]);
  assert.equal(out.parsed, { n: 1, s: 3, u: 1, d: { k: "a" }, r: {}, tu: ["x", 1], nu: null });
  // The .d.ts files type a user's TypeScript: ctx.options is the parsed options type.
  writeFileSync(join(project, "check.ts"), `
    import { tool } from "@aexhq/brain";
    import { z } from "zod";
    export const t = tool({ name: "x", description: "d", input: z.object({ id: z.string() }), options: z.object({ n: z.number() }), run: async (i, ctx) => ctx.finish(i.id.length + ctx.options.n) });
    export const placed = t({ n: 1 });
  `);
  writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: false, lib: ["ES2023", "DOM"], types: [] }, files: ["check.ts"] }));
  run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], project);
}

const versionOf = (pkg: string) => JSON.parse(readFileSync(join(root, "node_modules", pkg, "package.json"), "utf8")).version as string;

test("npm pack of @aexhq/brain installs and works in a clean temp project with the newest zod 4 (JS and TypeScript)", () => {
  useIt(app("newest", join(root, "node_modules/zod")), versionOf("zod"));
});

test("the same with the lowest zod the peer range allows (4.0.0)", () => {
  useIt(app("lowest", join(root, "node_modules/zod-lowest")), "4.0.0");
});

test.run();
