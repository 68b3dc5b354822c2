#!/usr/bin/env node
// `prepack` of every publishable package: `npm pack` / `npm publish` build the package first, so a
// tarball made on a fresh `npm ci` (no dist/ yet) still ships its code. The package's own build always
// runs; the workspaces it depends on (whose dist/ types its tsc reads) are built first when their
// dist/ is missing or older than their sources. Run from the package folder (npm does that).
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const readJson = (p) => JSON.parse(readFileSync(p, "utf8"));
const rootPkg = readJson(join(root, "package.json"));
/** Workspace folder by package name. */
const workspaces = new Map(rootPkg.workspaces.filter((w) => existsSync(join(root, w, "package.json"))).map((w) => [readJson(join(root, w, "package.json")).name, join(root, w)]));

/** Newest mtime of the files under `dir` (skipping node_modules and dist). */
function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === "node_modules" || e.name === "dist" || e.name === "test" || e.name.startsWith(".")) continue;
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}
const built = (dir) => existsSync(join(dir, "dist")) && statSync(join(dir, "dist")).mtimeMs >= newest(dir) && readdirSync(join(dir, "dist")).length > 0;

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const build = (dir) => execFileSync(npm, ["run", "--silent", "build"], { cwd: dir, stdio: ["ignore", "inherit", "inherit"] });

const order = [];
const seen = new Set();
function visit(dir) {
  if (seen.has(dir)) return;
  seen.add(dir);
  const pkg = readJson(join(dir, "package.json"));
  for (const dep of Object.keys(pkg.dependencies ?? {})) if (workspaces.has(dep)) visit(workspaces.get(dep));
  order.push(dir);
}
const self = resolve(process.cwd());
visit(self);
for (const dir of order) if (dir === self || !built(dir)) build(dir);
