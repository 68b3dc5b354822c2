// Part of `npm run build`: tsc emits only the .ts sources, but worker threads load these plain .mjs
// files next to the compiled modules (new URL("./worker.mjs", import.meta.url)), so they are copied
// into dist/ at the same relative paths.
import { cpSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const src = join(here, "src");
const dist = join(here, "dist");
for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith(".mjs")) continue;
  const from = join(entry.parentPath ?? entry.path, entry.name);
  cpSync(from, join(dist, relative(src, from)));
  console.log(`copied ${relative(here, from)}`);
}
