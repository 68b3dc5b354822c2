// The upload of an installed package for a Brain-managed host (brainEnv({ runtime })): the package's
// files (as npm pack would ship them: its `files`, package.json, README, LICENSE) under package/,
// its run-time dependencies (dependencies, optionalDependencies that are installed, peers that are
// not optional) as installed beside it under package/node_modules/, in a gzip tar written here with
// fixed modes and times, so the same installed files give the same bytes and digest in every process.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, realpathSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { SdkError, type ExecutableReference, type PackageUpload } from "@aexhq/brain-core";

interface Manifest {
  name?: string;
  version?: string;
  files?: string[];
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;

/** `name` installed for code in `fromDir`: node_modules/<name> in it or a folder above it (Node's lookup). */
function installedFrom(name: string, fromDir: string): string | undefined {
  for (let d = fromDir; ; d = dirname(d)) {
    const p = join(d, "node_modules", name);
    if (existsSync(join(p, "package.json"))) return realpathSync(p);
    if (dirname(d) === d) return undefined;
  }
}

/** Where the application has `name` installed: looked up from its working directory, then from its main module. */
export function findInstalled(name: string, from: string[] = applicationDirs()): string | undefined {
  for (const start of from) {
    // The application may be the package itself (a package's own tests, a monorepo).
    for (let d = start; ; d = dirname(d)) {
      if (existsSync(join(d, "package.json")) && readManifest(d).name === name) return realpathSync(d);
      if (dirname(d) === d) break;
    }
    const found = installedFrom(name, start);
    if (found) return found;
  }
  return undefined;
}

function applicationDirs(): string[] {
  const dirs = [process.cwd()];
  const main = process.argv[1];
  if (main && existsSync(main)) dirs.push(dirname(realpathSync(main)));
  return dirs;
}

/** The package's files as npm pack ships them, package-relative with "/" separators, sorted. */
function packageFiles(dir: string, manifest: Manifest): string[] {
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
    for (const e of readdirSync(abs, { withFileTypes: true })) {
      if (e.name === "node_modules" || e.name === ".git" || e.name === ".DS_Store" || e.name.endsWith(".tgz")) continue;
      const r = rel ? `${rel}/${e.name}` : e.name;
      const p = join(abs, e.name);
      let st;
      try {
        st = statSync(p);
      } catch {
        continue; // a dangling link
      }
      if (st.isDirectory()) {
        const real = realpathSync(p);
        if (seen.has(real)) continue;
        walk(p, r, new Set([...seen, real]));
      } else if (st.isFile()) {
        const included = rel === "" && always.test(e.name) ? true : roots === undefined ? !e.name.startsWith(".") : roots.some((x) => x === "" || r === x || r.startsWith(`${x}/`));
        if (included) out.push(r);
      }
    }
  };
  walk(dir, "", new Set([realpathSync(dir)]));
  return out.sort();
}

/**
 * The run-time dependency closure of the package in `dir`, each placed where Node finds it from its
 * dependents: node_modules/<name> at the top, or nested under its dependent when another version
 * took the top place. Returns [upload path (relative to package/), folder] pairs.
 */
function dependencies(dir: string, root: Manifest): Array<[string, string]> {
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
      const found = installedFrom(name, fromDir);
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
      visit(found, path, readManifest(found), name);
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

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, "0") + "\0";
}

function header(name: string, size: number, mode: number, type: string): Uint8Array {
  const h = new Uint8Array(512);
  const enc = new TextEncoder();
  const put = (s: string, at: number, len: number) => h.set(enc.encode(s).subarray(0, len), at);
  let path = name;
  let prefix = "";
  if (enc.encode(path).length > 100) {
    // ustar: split at a "/" into prefix (155) and name (100); the caller falls back to PAX otherwise.
    const cut = path.lastIndexOf("/", path.length - 1);
    for (let i = cut; i > 0; i = path.lastIndexOf("/", i - 1)) {
      if (enc.encode(path.slice(i + 1)).length <= 100 && enc.encode(path.slice(0, i)).length <= 155) {
        prefix = path.slice(0, i);
        path = path.slice(i + 1);
        break;
      }
    }
  }
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

const fits = (name: string) => {
  const enc = new TextEncoder();
  if (enc.encode(name).length <= 100) return true;
  for (let i = name.lastIndexOf("/"); i > 0; i = name.lastIndexOf("/", i - 1)) if (enc.encode(name.slice(i + 1)).length <= 100 && enc.encode(name.slice(0, i)).length <= 155) return true;
  return false;
};

/** A gzip'd tar (ustar, PAX for long names) of `entries`, in the given order. */
export function tarGz(entries: Array<{ path: string; data: Uint8Array; mode: number }>): Uint8Array {
  const chunks: Uint8Array[] = [];
  const pad = (n: number) => (n % 512 === 0 ? 0 : 512 - (n % 512));
  const file = (name: string, data: Uint8Array, mode: number, type: string) => {
    chunks.push(header(name, data.length, mode, type), data, new Uint8Array(pad(data.length)));
  };
  for (const e of entries) {
    if (!fits(e.path)) {
      // A PAX extended header carrying the full path ("<len> path=<path>\n", len counting itself).
      const body = ` path=${e.path}\n`;
      const bodyBytes = new TextEncoder().encode(body).length;
      let len = bodyBytes + 1;
      while (String(len).length + bodyBytes !== len) len = String(len).length + bodyBytes;
      file(`PaxHeader/${e.path.slice(-80)}`, new TextEncoder().encode(`${len}${body}`), 0o644, "x");
    }
    file(e.path, e.data, e.mode, "0");
  }
  chunks.push(new Uint8Array(1024));
  return new Uint8Array(gzipSync(Buffer.concat(chunks), { level: 9 }));
}

/** The upload of the installed package `executable` names (see the top of this file). */
export function packInstalled(executable: ExecutableReference, from?: string[]): PackageUpload {
  const dir = findInstalled(executable.package, from);
  if (dir === undefined) {
    throw new SdkError("package_not_installed", `package ${executable.package} (of a packaged tool placed in a managed brainEnv) is not installed where this application runs (looked up from ${(from ?? applicationDirs()).join(", ")}): install ${executable.package}@${executable.version}`, { package: executable.package, version: executable.version });
  }
  const manifest = readManifest(dir);
  if (manifest.version !== executable.version) {
    throw new SdkError("package_version_mismatch", `package ${executable.package}: the tool was imported from version ${executable.version} but ${dir} has version ${manifest.version}; the application must import its tools from the installed package`, { package: executable.package, version: executable.version, installed: manifest.version });
  }
  const entries: Array<{ path: string; data: Uint8Array; mode: number }> = [];
  const add = (base: string, folder: string) => {
    for (const f of packageFiles(folder, readManifest(folder))) {
      const abs = join(folder, ...f.split("/"));
      const mode = statSync(abs).mode & 0o111 ? 0o755 : 0o644;
      entries.push({ path: `package/${base ? `${base}/` : ""}${f}`, data: readFileSync(abs), mode });
    }
  };
  add("", dir);
  for (const [path, folder] of dependencies(dir, manifest)) add(path, folder);
  entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const bytes = tarGz(entries);
  return { bytes, digest: createHash("sha256").update(bytes).digest("hex") };
}
