// brain-tools: reading the package being published. Its package.json says what is public: each
// `exports` subpath (or `main`) resolved the way Node resolves an ESM import (conditions "node",
// "import", "default"), to the built JavaScript file that subpath loads.
import { existsSync, readFileSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";

/** A problem the publisher fixes: printed as one message, exit code 2. */
export class BrainToolsError extends Error {
  override readonly name = "BrainToolsError";
}

export interface PackageJson {
  name?: unknown;
  version?: unknown;
  type?: unknown;
  main?: unknown;
  exports?: unknown;
  files?: unknown;
}

/** One public module of the package: its `exports` subpath and the built file it loads. */
export interface Entry {
  /** "." or "./sub/path". */
  readonly subpath: string;
  /** Absolute path of the JavaScript file. */
  readonly file: string;
}

export interface PackageInfo {
  readonly dir: string;
  readonly name: string;
  readonly version: string;
  readonly json: PackageJson;
  readonly entries: Entry[];
  /** Subpaths brain-tools did not look into, and why (printed as notes). */
  readonly skipped: string[];
}

const CONDITIONS = new Set(["node", "import", "default"]);

/** An `exports` target for an ESM import under Node's default conditions, or undefined when there is none. */
function resolveTarget(target: unknown): string | undefined {
  if (typeof target === "string") return target;
  if (Array.isArray(target)) {
    for (const t of target) {
      const r = resolveTarget(t);
      if (r !== undefined) return r;
    }
    return undefined;
  }
  if (target !== null && typeof target === "object") {
    for (const [key, value] of Object.entries(target)) if (CONDITIONS.has(key)) return resolveTarget(value);
  }
  return undefined;
}

/** The subpath map of an `exports` field ("." for the sugar forms). */
function subpaths(exports: unknown): [string, unknown][] {
  if (typeof exports === "string" || Array.isArray(exports)) return [[".", exports]];
  if (exports !== null && typeof exports === "object") {
    const keys = Object.keys(exports);
    if (keys.length > 0 && keys.every((k) => k.startsWith("."))) return Object.entries(exports);
    return [[".", exports]];
  }
  return [];
}

export const rel = (dir: string, file: string): string => relative(dir, file).split(sep).join("/");

/** Reads `dir/package.json` and resolves its public JavaScript modules. */
export function readPackage(dir: string): PackageInfo {
  const path = join(dir, "package.json");
  if (!existsSync(path)) throw new BrainToolsError(`no package.json in ${dir}: run brain-tools in the folder of the package you publish, or pass that folder (brain-tools <dir>)`);
  let json: PackageJson;
  try {
    json = JSON.parse(readFileSync(path, "utf8")) as PackageJson;
  } catch (e) {
    throw new BrainToolsError(`${path} is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof json.name !== "string" || json.name === "") throw new BrainToolsError(`${path} has no "name": the executable reference names the package`);
  if (typeof json.version !== "string" || json.version === "") throw new BrainToolsError(`${path} has no "version": the executable reference names the version`);

  const raw: [string, unknown][] = json.exports !== undefined ? subpaths(json.exports) : [[".", typeof json.main === "string" ? json.main : "./index.js"]];
  const entries: Entry[] = [];
  const skipped: string[] = [];
  for (const [subpath, target] of raw) {
    if (subpath.includes("*")) {
      skipped.push(`${subpath}: subpath patterns are not read (export the tools from a named subpath)`);
      continue;
    }
    const resolved = resolveTarget(target);
    if (resolved === undefined) continue; // not importable under node/import/default (e.g. types only, or null)
    if (!/\.m?js$/.test(resolved)) {
      if (/\.[cm]?tsx?$/.test(resolved) && !/\.d\.[cm]?ts$/.test(resolved)) {
        throw new BrainToolsError(`exports "${subpath}" of ${json.name} loads ${resolved}, a TypeScript source: brain-tools reads the built JavaScript a user imports; point "default" (or "import") at the build output`);
      }
      continue; // package.json, .wit, .json, .cjs, ...: no tools there
    }
    const file = resolve(dir, resolved);
    if (!file.startsWith(resolve(dir) + sep)) throw new BrainToolsError(`exports "${subpath}" of ${json.name} points outside the package: ${resolved}`);
    if (!existsSync(file)) throw new BrainToolsError(`exports "${subpath}" of ${json.name} loads ${resolved}, which does not exist: run your build before brain-tools`);
    entries.push({ subpath, file });
  }
  if (entries.length === 0) {
    throw new BrainToolsError(`${json.name} exports no JavaScript module (package.json "exports" or "main"): nothing for brain-tools to read`);
  }
  return { dir, name: json.name, version: json.version, json, entries, skipped };
}

/** Whether `file` (package-relative) is an ES module by Node's rules. */
export function isEsm(pkg: PackageInfo, file: string): boolean {
  if (file.endsWith(".mjs")) return true;
  if (file.endsWith(".cjs")) return false;
  // The nearest package.json decides; brain-tools assumes the package's own (nested package.json files are rare in builds).
  return pkg.json.type === "module";
}

/** Whether npm would ship `file` given the package's `files` (no `files`: everything not ignored). */
export function shipped(pkg: PackageInfo, file: string): boolean {
  const files = pkg.json.files;
  if (!Array.isArray(files)) return true;
  const path = rel(pkg.dir, file);
  return files.some((f) => {
    if (typeof f !== "string") return false;
    const p = f.replace(/^\.\//, "").replace(/\/+$/, "");
    if (p.includes("*")) {
      const re = new RegExp(`^${p.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join("[^/]*")}(/|$)`);
      return re.test(path);
    }
    return path === p || path.startsWith(`${p}/`);
  });
}
