#!/usr/bin/env node
// Assembles the JSR packages of the SDK — @aexhq/brain-protocol (generated/), @aexhq/brain-core
// (sdk-core/src) and @aexhq/brain (sdk-deno) — as a Deno workspace in a folder of their own, with
// deno.json files made from the npm manifests (name, version, license, dependencies as npm:
// specifiers), so `deno publish` sees exactly what would be published.
// usage: node scripts/jsr-workspace.mjs <dir> [--publish-dry-run]
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const manifest = (dir) => JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"));

export function assembleJsrWorkspace(dest) {
  const protocol = manifest("generated");
  const core = manifest("sdk-core");
  const node = manifest("sdk-node");
  // zod is a peer dependency (">=4.0.0 <5"): the same lower bound, as a caret range JSR accepts.
  const zod = `npm:zod@^${/\d+\.\d+\.\d+/.exec(core.peerDependencies.zod)[0]}`;
  const typebox = protocol.dependencies["@sinclair/typebox"];
  const members = {
    protocol: {
      files: () => {
        for (const f of ["constants.ts", "digest.ts", "frames.ts", "index.ts", "report.ts", "router-host.ts", "router-link.ts", "router-runtime.ts", "scenario.ts", "schemas.ts", "validators.ts", "wit", "README.md", "LICENSE"]) cpSync(join(root, "generated", f), join(dest, "protocol", f), { recursive: true });
      },
      config: { name: protocol.name, version: protocol.version, license: protocol.license ?? "Apache-2.0", exports: "./index.ts", imports: { "@sinclair/typebox": `npm:@sinclair/typebox@${typebox}`, "@sinclair/typebox/": `npm:/@sinclair/typebox@${typebox}/`, canonicalize: `npm:canonicalize@${protocol.dependencies.canonicalize}` } },
    },
    core: {
      files: () => {
        cpSync(join(root, "sdk-core/src"), join(dest, "core/src"), { recursive: true });
        for (const f of ["README.md", "LICENSE"]) cpSync(join(root, "sdk-core", f), join(dest, "core", f));
      },
      config: { name: core.name, version: core.version, license: core.license ?? "Apache-2.0", exports: "./src/index.ts", imports: { zod } },
    },
    brain: {
      files: () => {
        for (const f of ["mod.ts", "platform.ts", "README.md"]) cpSync(join(root, "sdk-deno", f), join(dest, "brain", f));
        cpSync(join(root, "sdk-node/LICENSE"), join(dest, "brain/LICENSE"));
      },
      config: { name: node.name, version: node.version, license: node.license ?? "Apache-2.0", exports: "./mod.ts", imports: { zod } },
    },
  };
  mkdirSync(dest, { recursive: true });
  writeFileSync(join(dest, "deno.json"), JSON.stringify({ workspace: Object.keys(members).map((m) => `./${m}`) }, null, 2) + "\n");
  for (const [dir, m] of Object.entries(members)) {
    mkdirSync(join(dest, dir), { recursive: true });
    m.files();
    writeFileSync(join(dest, dir, "deno.json"), JSON.stringify(m.config, null, 2) + "\n");
  }
  return dest;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dest = process.argv[2];
  if (!dest) {
    console.error("usage: node scripts/jsr-workspace.mjs <dir> [--publish-dry-run]");
    process.exit(2);
  }
  assembleJsrWorkspace(dest);
  if (process.argv.includes("--publish-dry-run")) {
    const r = spawnSync(join(root, "node_modules/.bin/deno"), ["publish", "--dry-run", "--allow-dirty"], { cwd: dest, stdio: "inherit", env: { ...process.env, DENO_NO_UPDATE_CHECK: "1" } });
    process.exit(r.status ?? 1);
  }
}
