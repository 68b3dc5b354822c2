// Shared by the install-as-a-user tests: packs the publishable packages with `npm pack` (their
// prepack builds them, so this works on a fresh `npm ci` with no dist/), packs their third-party
// dependencies from this checkout's node_modules, and installs all of it in a temporary project
// outside the repository with `npm install --offline` (nothing comes from the registry).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("../..", import.meta.url));
export const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const readJson = (p) => JSON.parse(readFileSync(p, "utf8"));

/** The packages a user installs, by workspace folder. */
export const PUBLISHED = { generated: "@aexhq/brain-protocol", "sdk-core": "@aexhq/brain-core", "sdk-node": "@aexhq/brain", runtime: "@aexhq/brain-runtime", conformance: "@aexhq/brain-conformance" };

/** Runs a command to completion; a failure's message carries its output. */
export function run(cmd, args, cwd, env = {}) {
  try {
    // `npm pack --json` of every third-party package lists every file they hold: several MB.
    return execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 300_000, maxBuffer: 256 * 1024 * 1024, env: { ...process.env, ...env } });
  } catch (e) {
    e.message = `${e.message}\n--- stdout ---\n${e.stdout ?? ""}\n--- stderr ---\n${e.stderr ?? ""}`;
    throw e;
  }
}

/** A fresh temporary folder outside the repository. */
export const tempDir = (prefix) => mkdtempSync(join(realpathSync(tmpdir()), prefix));

/**
 * `npm pack` of the given workspaces into `dest`, in one npm run (each prepack builds what it
 * needs). Returns the tarball paths by package name.
 */
export function packWorkspaces(workspaces, dest) {
  mkdirSync(dest, { recursive: true });
  const out = run(npm, ["pack", "--json", "--pack-destination", dest, ...workspaces.flatMap((w) => ["-w", w])], root);
  const packed = JSON.parse(out.slice(out.indexOf("[")));
  return Object.fromEntries(packed.map((p) => [p.name, { file: join(dest, p.filename), files: p.files.map((f) => f.path) }]));
}

/** Where Node would resolve `name` from `fromDir` (node_modules lookup up the tree). */
function resolveDir(name, fromDir) {
  for (let d = fromDir; ; d = dirname(d)) {
    const p = join(d, "node_modules", name);
    if (existsSync(join(p, "package.json"))) return realpathSync(p);
    if (dirname(d) === d) return undefined;
  }
}

/**
 * The third-party packages (name@version -> folder in this checkout's node_modules) that the given
 * workspaces need at run time: dependencies and installed optional dependencies, transitively.
 * `npm ci` caches tarballs but not registry metadata, so an offline install of ranges cannot come
 * from the npm cache; tarballs of exactly the versions the lockfile chose can.
 */
/**
 * Packages of which the published packages' dependencies may hold two versions, which this offline
 * install cannot place side by side (it has no registry to resolve the second from): the user's
 * app pins the one shipped with npm `overrides` (pinnedOverrides: `$name`, its direct dependency), a
 * version every dependent works with. Today: @modelcontextprotocol/sdk asks for content-type ^1.0.5
 * and its express ^2.1.0; both only call `parse` and `format`, the same in both. The SDK is an
 * optional peer of the runtime, so the pin applies only while another published package (the
 * conformance runner's MCP subject) depends on it. A user installing from the registry gets npm's
 * own nested layout instead.
 */
export const ONE_VERSION = { "content-type": "2.1.0" };

/** npm `overrides` for an app that installs `closure`'s tarballs: each pinned package in it is the app's own (direct) one for every dependent. */
export function pinnedOverrides(closure) {
  const names = new Set(closure.map((dir) => readJson(join(dir, "package.json")).name));
  return Object.fromEntries(Object.keys(ONE_VERSION).filter((name) => names.has(name)).map((name) => [name, `$${name}`]));
}

export function thirdPartyClosure(workspaces, extra = []) {
  const seen = new Map();
  const ours = new Set(Object.values(PUBLISHED));
  const visit = (dir) => {
    const pkg = readJson(join(dir, "package.json"));
    const key = `${pkg.name}@${pkg.version}`;
    if (seen.has(key)) return;
    // A package pinned to one version (ONE_VERSION): its other versions are not shipped.
    if (ONE_VERSION[pkg.name] !== undefined && ONE_VERSION[pkg.name] !== pkg.version) return;
    if (!ours.has(pkg.name)) seen.set(key, dir);
    for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })) {
      const found = resolveDir(dep, dir);
      if (found) visit(found);
      else if (!pkg.optionalDependencies?.[dep]) throw new Error(`${dep} (a dependency of ${key}) is not installed in this checkout`);
    }
  };
  for (const w of workspaces) visit(join(root, w));
  for (const name of extra) visit(resolveDir(name, root));
  const names = [...seen.keys()].map((k) => k.slice(0, k.lastIndexOf("@")));
  const twice = names.filter((n, i) => names.indexOf(n) !== i);
  if (twice.length) throw new Error(`two versions of ${twice.join(", ")} would be installed side by side; the install test cannot place both`);
  return [...seen.values()];
}

/** Packs third-party package folders (their own prepack scripts are not ours to run). */
export function packFolders(folders, dest) {
  mkdirSync(dest, { recursive: true });
  const out = run(npm, ["pack", "--json", "--ignore-scripts", "--pack-destination", dest, ...folders], root);
  return JSON.parse(out.slice(out.indexOf("["))).map((p) => join(dest, p.filename));
}

/**
 * better-sqlite3 installs its native binary with prebuild-install, which downloads the build for
 * this Node ABI and platform from GitHub (or compiles SQLite for two minutes when that fails). The
 * test machine reaches no GitHub, so the same file comes from prebuild-install's documented local
 * prebuilds folder (npm_config_better_sqlite3_local_prebuilds), filled with the binary `npm ci`
 * built in this checkout: the package's own install script still runs and loads it.
 */
export function betterSqlitePrebuilds(dest) {
  const dir = join(root, "node_modules/better-sqlite3");
  const binary = join(dir, "build/Release/better_sqlite3.node");
  if (!existsSync(binary)) return {};
  mkdirSync(dest, { recursive: true });
  const { version } = readJson(join(dir, "package.json"));
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  run("tar", ["-czf", join(dest, name), "-C", dir, "build/Release/better_sqlite3.node"], root);
  return { npm_config_better_sqlite3_local_prebuilds: dest };
}

/** A new project folder with a package.json, as `npm init` leaves it. */
export function newProject(dir, pkg = {}) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "brain-user-app", version: "1.0.0", private: true, type: "module", ...pkg }, null, 2));
  return dir;
}

/** `npm install --offline` of tarballs, with an npm cache of its own (a user's machine, not this checkout's). */
export function installTarballs(project, tarballs, env = {}) {
  return run(npm, ["install", "--offline", "--no-audit", "--no-fund", ...tarballs], project, { npm_config_cache: join(project, "..", ".npm-cache"), ...env });
}

/** Every file an `exports` map, `types`, `main` or `bin` of a packed package.json points at. */
export function manifestTargets(manifest) {
  const targets = new Set();
  const walk = (v) => {
    if (typeof v === "string") targets.add(v);
    else if (v && typeof v === "object") for (const x of Object.values(v)) walk(x);
  };
  walk(manifest.exports);
  walk(typeof manifest.bin === "string" ? manifest.bin : manifest.bin ?? {});
  for (const k of ["main", "types", "module"]) if (manifest[k]) targets.add(manifest[k]);
  return [...targets].map((t) => t.replace(/^\.\//, ""));
}

/** Lines of a child's output, and a promise for the first line matching `re`. */
export function watchOutput(child) {
  let text = "";
  const waiters = [];
  const onData = (d) => {
    text += d;
    for (const w of [...waiters]) {
      const m = w.re.exec(text);
      if (m) { waiters.splice(waiters.indexOf(w), 1); w.resolve(m); }
    }
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  return {
    text: () => text,
    waitFor(re, ms = 60_000) {
      const m = re.exec(text);
      if (m) return Promise.resolve(m);
      return new Promise((resolve, reject) => {
        const w = { re, resolve };
        waiters.push(w);
        const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${re}; output so far:\n${text}`)), ms);
        child.once("exit", (code, signal) => setTimeout(() => { if (waiters.includes(w)) reject(new Error(`exited (${code ?? signal}) before ${re}; output:\n${text}`)); }, 50));
        const orig = w.resolve;
        w.resolve = (m) => { clearTimeout(timer); orig(m); };
      });
    },
  };
}
