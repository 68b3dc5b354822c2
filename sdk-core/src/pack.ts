// The upload of an installed package for a Brain-managed host (brainEnv({ runtime })), shared by the
// Node and Deno SDKs: the package's files (as npm pack would ship them: its `files`, package.json,
// README, LICENSE) under package/, its run-time dependencies (dependencies, optionalDependencies that
// are installed, peers that are not optional) as installed beside it under package/node_modules/, in a
// gzip tar written here with fixed modes and times, so the same installed files give the same bytes
// and digest in every process of a runtime. Web APIs only: each SDK's platform supplies the few
// synchronous file-system reads (PackageFiles) over its own API (node:fs, Deno.*Sync).
import { sha256Hex } from "@aexhq/brain-protocol";
import { SdkError } from "./errors.ts";
import type { PackageUpload } from "./platform.ts";
import type { ExecutableReference } from "./tool.ts";

/**
 * The file-system reads packing needs, over absolute paths (either separator). Synchronous: packing
 * reads many small files once per process and package. A read the process may not make throws the
 * platform's own error (Deno: naming the --allow-read flag).
 */
export interface PackageFiles {
  /** What is at `path`, following links; undefined when nothing is (or a dangling link). */
  stat(path: string): { isFile: boolean; isDirectory: boolean; executable: boolean } | undefined;
  /** The names in a directory. */
  readDir(path: string): string[];
  readFile(path: string): Uint8Array;
  /** `path` absolute, with every link resolved. */
  realPath(path: string): string;
}

/** Where and how to look for the package (packInstalledWith). */
export interface PackOptions {
  /** Folders to look up from, in order (Node's lookup: node_modules/<name> in each and every folder above). */
  from: string[];
  /** Appended to the `package_not_installed` message: what to do on this runtime. */
  hint?: string;
}

interface Manifest {
  name?: string;
  version?: string;
  files?: string[];
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const isSep = (c: string | undefined) => c === "/" || c === "\\";

/** `dir` joined with "/"-separated `parts`. */
export function joinPath(dir: string, ...parts: string[]): string {
  return [isSep(dir.at(-1)) ? dir.slice(0, -1) : dir, ...parts].join("/");
}

/** The folder above `path`; the root ("/", "C:\\") is its own parent. */
export function parentPath(path: string): string {
  if (/^([A-Za-z]:)?[\\/]$/.test(path)) return path;
  const trimmed = path.replace(/[\\/]+$/, "");
  const i = Math.max(trimmed.lastIndexOf("/"), trimmed.lastIndexOf("\\"));
  if (i < 0) return trimmed;
  const head = trimmed.slice(0, i);
  if (head === "" || /^[A-Za-z]:$/.test(head)) return trimmed.slice(0, i + 1);
  return head;
}

const readManifest = (fs: PackageFiles, dir: string): Manifest => JSON.parse(new TextDecoder().decode(fs.readFile(joinPath(dir, "package.json")))) as Manifest;
const hasManifest = (fs: PackageFiles, dir: string) => fs.stat(joinPath(dir, "package.json"))?.isFile === true;

/** `name` installed for code in `fromDir`: node_modules/<name> in it or a folder above it (Node's lookup). */
function installedFrom(fs: PackageFiles, name: string, fromDir: string): string | undefined {
  for (let d = fromDir; ; d = parentPath(d)) {
    const p = joinPath(d, "node_modules", name);
    if (hasManifest(fs, p)) return fs.realPath(p);
    if (parentPath(d) === d) return undefined;
  }
}

/**
 * The folder of the installed package `name`, looked up from each of `from` in turn: the folder
 * itself or one above it when its package.json has that name (a package's own tests, a monorepo),
 * else node_modules/<name> there or above. Links are resolved (npm workspaces, Deno's node_modules/.deno).
 */
export function findInstalled(fs: PackageFiles, name: string, from: string[]): string | undefined {
  for (const given of from) {
    if (!fs.stat(given)?.isDirectory) continue;
    const start = fs.realPath(given);
    for (let d = start; ; d = parentPath(d)) {
      if (hasManifest(fs, d) && readManifest(fs, d).name === name) return fs.realPath(d);
      if (parentPath(d) === d) break;
    }
    const found = installedFrom(fs, name, start);
    if (found) return found;
  }
  return undefined;
}

/** The package's files as npm pack ships them, package-relative with "/" separators, sorted. */
function packageFiles(fs: PackageFiles, dir: string, manifest: Manifest): string[] {
  const out: string[] = [];
  const always = /^(package\.json|readme(\..*)?|license(\..*)?|licence(\..*)?)$/i;
  const roots = Array.isArray(manifest.files)
    ? manifest.files.map((f) => f.replace(/^\.?\/+/, "").replace(/\/+$/, "")).map((f) => {
        // A glob ships a subset of its folder; its folder is a safe superset here.
        const glob = f.search(/[*?[{]/);
        return glob < 0 ? f : f.slice(0, glob).replace(/\/[^/]*$/, "").replace(/\/+$/, "");
      })
    : undefined;
  const walk = (abs: string, rel: string, seen: Set<string>) => {
    for (const name of fs.readDir(abs)) {
      if (name === "node_modules" || name === ".git" || name === ".DS_Store" || name.endsWith(".tgz")) continue;
      const r = rel ? `${rel}/${name}` : name;
      const p = joinPath(abs, name);
      const st = fs.stat(p);
      if (!st) continue; // a dangling link
      if (st.isDirectory) {
        const real = fs.realPath(p);
        if (seen.has(real)) continue;
        walk(p, r, new Set([...seen, real]));
      } else if (st.isFile) {
        const included = rel === "" && always.test(name) ? true : roots === undefined ? !name.startsWith(".") : roots.some((x) => x === "" || r === x || r.startsWith(`${x}/`));
        if (included) out.push(r);
      }
    }
  };
  walk(dir, "", new Set([fs.realPath(dir)]));
  return out.sort();
}

/**
 * The run-time dependency closure of the package in `dir`, each placed where Node finds it from its
 * dependents: node_modules/<name> at the top, or nested under its dependent when another version
 * took the top place. Returns [upload path (relative to package/), folder] pairs.
 */
function dependencies(fs: PackageFiles, dir: string, root: Manifest): Array<[string, string]> {
  const top = new Map<string, string>(); // name -> folder at package/node_modules/<name>
  const placed: Array<[string, string]> = [];
  const missing: string[] = [];
  const visit = (fromDir: string, fromPath: string, manifest: Manifest, who: string) => {
    const wanted: Array<[string, boolean]> = [
      ...Object.keys(manifest.dependencies ?? {}).map((n) => [n, true] as [string, boolean]),
      ...Object.keys(manifest.optionalDependencies ?? {}).map((n) => [n, false] as [string, boolean]),
      ...Object.keys(manifest.peerDependencies ?? {}).filter((n) => !manifest.peerDependenciesMeta?.[n]?.optional).map((n) => [n, true] as [string, boolean]),
    ];
    for (const [name, required] of wanted) {
      if (name === root.name) continue;
      const found = installedFrom(fs, name, fromDir);
      if (!found) {
        if (required) missing.push(`${name} (needed by ${who})`);
        continue;
      }
      let path: string;
      const atTop = top.get(name);
      if (atTop === found) continue;
      if (atTop === undefined) {
        top.set(name, found);
        path = `node_modules/${name}`;
      } else {
        path = `${fromPath ? `${fromPath}/` : ""}node_modules/${name}`;
        if (placed.some(([p]) => p === path)) continue;
      }
      placed.push([path, found]);
      visit(found, path, readManifest(fs, found), name);
    }
  };
  visit(dir, "", root, root.name ?? dir);
  if (missing.length > 0) {
    throw new SdkError("package_incomplete", `package ${root.name}@${root.version} (installed at ${dir}): its run-time dependencies are not installed: ${[...new Set(missing)].join(", ")}; install them (npm install) before placing its tools in a managed brainEnv`, { package: root.name, missing });
  }
  return placed;
}

/** npm pack's fixed mtime (1985-10-26T08:15:00Z), so the bytes depend on the files only. */
const MTIME = 499162500;
const encoder = new TextEncoder();

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, "0") + "\0";
}

/** Splits a path too long for ustar's name (100) into prefix (155) and name at a "/"; undefined when it cannot. */
function ustarSplit(path: string): [string, string] | undefined {
  if (encoder.encode(path).length <= 100) return ["", path];
  for (let i = path.lastIndexOf("/"); i > 0; i = path.lastIndexOf("/", i - 1)) {
    if (encoder.encode(path.slice(i + 1)).length <= 100 && encoder.encode(path.slice(0, i)).length <= 155) return [path.slice(0, i), path.slice(i + 1)];
  }
  return undefined;
}

function header(name: string, size: number, mode: number, type: string): Uint8Array {
  const h = new Uint8Array(512);
  const put = (s: string, at: number, len: number) => h.set(encoder.encode(s).subarray(0, len), at);
  // A name that does not split is carried by a PAX header before this one; this one is truncated.
  const [prefix, path] = ustarSplit(name) ?? ["", name];
  put(path, 0, 100);
  put(octal(mode, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  put(octal(MTIME, 12), 136, 12);
  put("        ", 148, 8);
  put(type, 156, 1);
  put("ustar\u000000", 257, 8);
  put(prefix, 345, 155);
  let sum = 0;
  for (const b of h) sum += b;
  put(octal(sum, 7) + " ", 148, 8);
  return h;
}

/** A tar (ustar, PAX for long names) of `entries`, in the given order. */
export function tar(entries: Array<{ path: string; data: Uint8Array; mode: number }>): Uint8Array {
  const chunks: Uint8Array[] = [];
  const pad = (n: number) => (n % 512 === 0 ? 0 : 512 - (n % 512));
  const file = (name: string, data: Uint8Array, mode: number, type: string) => {
    chunks.push(header(name, data.length, mode, type), data, new Uint8Array(pad(data.length)));
  };
  for (const e of entries) {
    if (!ustarSplit(e.path)) {
      // A PAX extended header carrying the full path ("<len> path=<path>\n", len counting itself).
      const body = ` path=${e.path}\n`;
      const bodyBytes = encoder.encode(body).length;
      let len = bodyBytes + 1;
      while (String(len).length + bodyBytes !== len) len = String(len).length + bodyBytes;
      file(`PaxHeader/${e.path.slice(-80)}`, encoder.encode(`${len}${body}`), 0o644, "x");
    }
    file(e.path, e.data, e.mode, "0");
  }
  chunks.push(new Uint8Array(1024));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** gzip through the Web CompressionStream (the bytes are the runtime's own, stable for one runtime). */
export async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * The upload of the installed package `executable` names (see the top of this file), read through
 * `fs`; `package_not_installed`, `package_version_mismatch` or `package_incomplete` when the
 * installed package cannot give it.
 */
export async function packInstalledWith(fs: PackageFiles, executable: ExecutableReference, opts: PackOptions): Promise<PackageUpload> {
  const dir = findInstalled(fs, executable.package, opts.from);
  if (dir === undefined) {
    throw new SdkError("package_not_installed", `package ${executable.package} (of a packaged tool placed in a managed brainEnv) is not installed where this application runs (looked up from ${opts.from.join(", ")}): install ${executable.package}@${executable.version}${opts.hint ? `; ${opts.hint}` : ""}`, { package: executable.package, version: executable.version });
  }
  const manifest = readManifest(fs, dir);
  if (manifest.version !== executable.version) {
    throw new SdkError("package_version_mismatch", `package ${executable.package}: the tool was imported from version ${executable.version} but ${dir} has version ${manifest.version}; the application must import its tools from the installed package`, { package: executable.package, version: executable.version, installed: manifest.version });
  }
  const entries: Array<{ path: string; data: Uint8Array; mode: number }> = [];
  const add = (base: string, folder: string) => {
    for (const f of packageFiles(fs, folder, readManifest(fs, folder))) {
      const abs = joinPath(folder, f);
      const mode = fs.stat(abs)?.executable ? 0o755 : 0o644;
      entries.push({ path: `package/${base ? `${base}/` : ""}${f}`, data: fs.readFile(abs), mode });
    }
  };
  add("", dir);
  for (const [path, folder] of dependencies(fs, dir, manifest)) add(path, folder);
  entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const bytes = await gzip(tar(entries));
  return { bytes, digest: await sha256Hex(bytes) };
}
