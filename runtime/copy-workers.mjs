// Part of `npm run build`: tsc emits only the .ts sources, but worker threads load these plain .mjs
// files next to the compiled modules (new URL("./worker.mjs", import.meta.url)), the /ui page's
// static files (src/ui/assets/: HTML, CSS, the page's ES modules) are read next to ui/routes.js,
// and journal/journal-rules.js (plain JavaScript the runtime imports and /ui serves, with its
// declarations, journal-rules.d.ts) sits next to journal/session.js, so all are copied into dist/
// at the same relative paths.
import { cpSync, readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const src = join(here, "src");
const dist = join(here, "dist");
for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
  const from = join(entry.parentPath ?? entry.path, entry.name);
  const asset = relative(src, from).split(sep).slice(0, 2).join("/") === "ui/assets";
  const rules = entry.name === "journal-rules.js" || entry.name === "journal-rules.d.ts";
  if (!entry.isFile() || !(entry.name.endsWith(".mjs") || asset || rules)) continue;
  cpSync(from, join(dist, relative(src, from)));
  console.log(`copied ${relative(here, from)}`);
}
