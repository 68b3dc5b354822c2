#!/usr/bin/env node
// Part of `npm run build -w sdk-node`: emits dist/deno/ (mod.js, platform.js) from sdk-deno/mod.ts
// and sdk-deno/platform.ts, the Deno platform (native WebSocket, Deno.env, Deno.readFile), so that the
// npm package's `deno` export condition gives Deno users the same SDK without `ws` or process.env.
// The sources stay in sdk-deno/ (one copy); this only strips their types (deno check and deno lint
// of them run in the sdk-deno suite) and points the relative import at the emitted .js file.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = join(fileURLToPath(new URL("..", import.meta.url)));
const out = join(root, "sdk-node/dist/deno");
mkdirSync(out, { recursive: true });
for (const name of ["mod", "platform"]) {
  const source = readFileSync(join(root, "sdk-deno", `${name}.ts`), "utf8");
  const { outputText } = ts.transpileModule(source, {
    fileName: `${name}.ts`,
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, verbatimModuleSyntax: true, rewriteRelativeImportExtensions: true },
  });
  writeFileSync(join(out, `${name}.js`), `// Emitted from sdk-deno/${name}.ts by scripts/build-deno-entry.mjs. DO NOT EDIT.\n${outputText}`);
}
console.log("emitted sdk-node/dist/deno/{mod,platform}.js from sdk-deno/");
