// Builds @aexhq/brain-protocol, @aexhq/brain-core and @aexhq/brain, packs them, installs the
// tarballs in a clean temp project (offline: nothing from the registry) and uses them there from JS and TS.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, rmSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const run = (cmd: string, args: string[], cwd: string) => execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 180_000 });

test("npm pack of @aexhq/brain installs and imports in a clean temp project", () => {
  const dir = mkdtempSync(join(tmpdir(), "brain-pack-"));
  try {
    const packs = join(dir, "packs");
    mkdirSync(packs);
    for (const ws of ["generated", "sdk-core", "sdk-node"]) {
      run(npm, ["run", "build"], join(root, ws));
      run(npm, ["pack", "--pack-destination", packs], join(root, ws));
    }
    // Their third-party dependencies (and zod, the peer) come as tarballs packed from this checkout's
    // node_modules: `npm ci` caches tarballs but not registry metadata, so an offline install of a
    // range like "zod@4" fails on a machine whose npm cache saw nothing but `npm ci`.
    for (const dep of ["zod", "ws", "@sinclair/typebox"]) run(npm, ["pack", "--pack-destination", packs], join(root, "node_modules", dep));
    const tarballs = readdirSync(packs).filter((f) => f.endsWith(".tgz")).map((f) => join(packs, f));
    assert.is(tarballs.length, 6);
    const app = join(dir, "app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "pack-check", private: true, type: "module" }));
    run(npm, ["install", "--offline", "--no-audit", "--no-fund", ...tarballs], app);
    writeFileSync(join(app, "check.mjs"), `
      import { tool, Brain, hostEnv, BrainError } from "@aexhq/brain";
      import { z } from "zod";
      import { createRequire } from "node:module";
      const t = tool({ name: "lookup", description: "d", input: z.object({ id: z.string() }), options: z.object({ prefix: z.string() }), run: async (i, ctx) => ctx.finish(ctx.options.prefix + i.id) });
      const placed = t({ prefix: "p:" });
      const contract = await t.tool.contract();
      const wit = createRequire(import.meta.url).resolve("@aexhq/brain/contracts/tool.wit");
      console.log(JSON.stringify({ digest: contract.digest, options: placed.options, brain: typeof Brain, env: hostEnv({ name: "app" }).kind, err: typeof BrainError, wit: wit.endsWith("tool.wit") }));
    `);
    const out = JSON.parse(run(process.execPath, ["check.mjs"], app));
    assert.match(out.digest, /^[0-9a-f]{64}$/);
    assert.equal(out.options, { prefix: "p:" });
    assert.equal([out.brain, out.env, out.err, out.wit], ["function", "host", "function", true]);
    // The .d.ts files type a user's TypeScript: ctx.options is the parsed options type.
    writeFileSync(join(app, "check.ts"), `
      import { tool } from "@aexhq/brain";
      import { z } from "zod";
      export const t = tool({ name: "x", description: "d", input: z.object({ id: z.string() }), options: z.object({ n: z.number() }), run: async (i, ctx) => ctx.finish(i.id.length + ctx.options.n) });
      export const placed = t({ n: 1 });
    `);
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify({ compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: false, lib: ["ES2023", "DOM"], types: [] }, files: ["check.ts"] }));
    run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], app);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
