import { readFileSync, writeFileSync, mkdirSync, existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { generate } from "./generate.ts";

// Hand-maintained files inside generated/ that codegen neither writes nor deletes.
const KEEP = new Set(["generated/package.json", "generated/tsconfig.json", "generated/tsconfig.build.json", "generated/README.md", "generated/LICENSE"]);
const SKIP_DIRS = new Set(["node_modules", "dist", ".turbo"]);

function listGenerated(root: string, dir = "generated"): string[] {
  const abs = join(root, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs).flatMap((name) => {
    const rel = `${dir}/${name}`;
    if (statSync(join(root, rel)).isDirectory()) return SKIP_DIRS.has(name) ? [] : listGenerated(root, rel);
    return KEEP.has(rel) ? [] : [rel];
  });
}

/** Compares what the contract produces with what is on disk. Returns human-readable drift lines. */
export function drift(root: string): string[] {
  const files = generate(root);
  const lines: string[] = [];
  for (const [path, text] of files) {
    const abs = join(root, path);
    if (!existsSync(abs)) lines.push(`missing: ${path}`);
    else if (readFileSync(abs, "utf8") !== text) lines.push(`differs: ${path}`);
  }
  for (const path of listGenerated(root)) if (!files.has(path)) lines.push(`stale: ${path}`);
  return lines;
}

export function write(root: string): string[] {
  const files = generate(root);
  for (const path of listGenerated(root)) if (!files.has(path)) rmSync(join(root, path));
  const written: string[] = [];
  for (const [path, text] of files) {
    const abs = join(root, path);
    if (existsSync(abs) && readFileSync(abs, "utf8") === text) continue;
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, text);
    written.push(path);
  }
  return written;
}

const isMain = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const args = process.argv.slice(2);
  const rootIndex = args.indexOf("--root");
  const root = resolve(rootIndex >= 0 ? args[rootIndex + 1]! : join(dirname(fileURLToPath(import.meta.url)), "../.."));
  if (args.includes("--check")) {
    const lines = drift(root);
    if (lines.length) {
      console.error(`generated files do not match contract/ (run: npm run codegen):\n  ${lines.join("\n  ")}`);
      process.exit(1);
    }
    console.log("codegen --check: generated files match contract/");
  } else {
    const written = write(root);
    console.log(written.length ? `codegen wrote ${written.length} file(s):\n  ${written.map((p) => relative(root, join(root, p))).join("\n  ")}` : "codegen: nothing changed");
  }
}
