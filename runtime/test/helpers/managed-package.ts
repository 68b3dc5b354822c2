// Builds what a Brain-managed host is given: a real `npm pack` tarball of a package of tools, with
// its dependencies (the SDK's own tarballs, packed by npm, and the third-party packages as this
// checkout installed them) placed under package/node_modules/, re-tarred in npm pack's layout.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const readJson = (p: string) => JSON.parse(readFileSync(p, "utf8")) as { name: string; version: string; dependencies?: Record<string, string>; peerDependencies?: Record<string, string> };
const OURS = new Set(["@aexhq/brain", "@aexhq/brain-core", "@aexhq/brain-protocol"]);

function run(cmd: string, args: string[], cwd: string): string {
  try {
    return execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 300_000 });
  } catch (e) {
    const x = e as { message: string; stdout?: string; stderr?: string };
    throw new Error(`${x.message}\n${x.stdout ?? ""}\n${x.stderr ?? ""}`);
  }
}

/**
 * `npm pack` of workspaces (their prepack builds them on a fresh clone), by package name.
 * BRAIN_TEST_PACKS=<folder> reuses tarballs already packed there (the file names npm gives them).
 */
export function packWorkspaces(workspaces: string[], dest: string): Record<string, string> {
  mkdirSync(dest, { recursive: true });
  const reuse = process.env.BRAIN_TEST_PACKS;
  if (reuse) {
    const out: Record<string, string> = {};
    for (const w of workspaces) {
      const pkg = readJson(join(repoRoot, w, "package.json"));
      out[pkg.name] = join(reuse, `${pkg.name.replace(/^@/, "").replace("/", "-")}-${pkg.version}.tgz`);
    }
    return out;
  }
  // Workspaces whose dist/ is newer than their sources (the install suite, run before, built them)
  // are packed as they are; the others through their prepack, which builds them.
  const fresh = workspaces.filter((w) => built(join(repoRoot, w)));
  const stale = workspaces.filter((w) => !fresh.includes(w));
  const text = [
    fresh.length ? run(npm, ["pack", "--json", "--ignore-scripts", "--pack-destination", dest, ...fresh.flatMap((w) => ["-w", w])], repoRoot) : "[]",
    stale.length ? run(npm, ["pack", "--json", "--pack-destination", dest, ...stale.flatMap((w) => ["-w", w])], repoRoot) : "[]",
  ];
  const packed = text.flatMap((t) => JSON.parse(t.slice(t.indexOf("["))) as Array<{ name: string; filename: string }>);
  return Object.fromEntries(packed.map((p) => [p.name, join(dest, p.filename)]));
}

/** Newest mtime under `dir`, skipping node_modules, dist, test and hidden entries (as scripts/prepack.mjs does). */
function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === "node_modules" || e.name === "dist" || e.name === "test" || e.name.startsWith(".")) continue;
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}
const built = (dir: string) => existsSync(join(dir, "dist")) && readdirSync(join(dir, "dist")).length > 0 && statSync(join(dir, "dist")).mtimeMs >= newest(dir);

/** `npm pack` of a plain folder (no scripts). */
export function packFolder(dir: string, dest: string): string {
  mkdirSync(dest, { recursive: true });
  const text = run(npm, ["pack", "--json", "--ignore-scripts", "--pack-destination", dest, dir], repoRoot);
  return join(dest, (JSON.parse(text.slice(text.indexOf("["))) as Array<{ filename: string }>)[0]!.filename);
}

function resolveDir(name: string, fromDir: string): string | undefined {
  for (let d = fromDir; ; d = dirname(d)) {
    const p = join(d, "node_modules", name);
    if (existsSync(join(p, "package.json"))) return realpathSync(p);
    if (dirname(d) === d) return undefined;
  }
}

/** The third-party packages (folders in this checkout) the SDK and `extra` need at run time. */
export function thirdParty(extra: string[]): string[] {
  const seen = new Map<string, string>();
  const visit = (dir: string) => {
    const pkg = readJson(join(dir, "package.json"));
    if (seen.has(pkg.name)) return;
    if (!OURS.has(pkg.name)) seen.set(pkg.name, dir);
    for (const dep of Object.keys(pkg.dependencies ?? {})) {
      const found = resolveDir(dep, dir);
      if (found) visit(found);
    }
  };
  for (const w of ["generated", "sdk-core", "sdk-node"]) visit(join(repoRoot, w));
  for (const name of extra) visit(resolveDir(name, repoRoot)!);
  return [...seen.values()];
}

export interface Upload {
  file: string;
  bytes: Uint8Array;
  digest: string;
}

/**
 * The upload: `packageTarball` (npm pack output) unpacked, `sdkTarballs` and the third-party
 * closure (plus zod) under package/node_modules/, tarred again. `edit` may change package.json.
 */
export function managedUpload(packageTarball: string, sdkTarballs: string[], dest: string, edit?: (pkg: Record<string, unknown>) => void): Upload {
  const stage = mkdtempSync(join(realpathSync(tmpdir()), "brain-upload-"));
  try {
    run("tar", ["-xzf", packageTarball, "-C", stage], stage);
    const pkgDir = join(stage, "package");
    if (edit) {
      const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as Record<string, unknown>;
      edit(pkg);
      writeFileSync(join(pkgDir, "package.json"), JSON.stringify(pkg, null, 2));
    }
    for (const t of sdkTarballs) {
      const name = (JSON.parse(run("tar", ["-xzOf", t, "package/package.json"], stage)) as { name: string }).name;
      const into = join(pkgDir, "node_modules", name);
      mkdirSync(into, { recursive: true });
      run("tar", ["-xzf", t, "-C", into, "--strip-components=1"], stage);
    }
    for (const dir of thirdParty(["zod"])) {
      const name = readJson(join(dir, "package.json")).name;
      cpSync(dir, join(pkgDir, "node_modules", name), { recursive: true, dereference: true, filter: (src) => !src.slice(dir.length).includes("node_modules") });
    }
    mkdirSync(dest, { recursive: true });
    const file = join(dest, `upload-${Date.now()}-${Math.random().toString(16).slice(2, 8)}.tgz`);
    run("tar", ["-czf", file, "-C", stage, "package"], stage);
    const bytes = new Uint8Array(readFileSync(file));
    return { file, bytes, digest: createHash("sha256").update(bytes).digest("hex") };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}
