import { execFile } from "node:child_process";
import { statSync } from "node:fs";
import { promisify } from "node:util";
import { DigestStore } from "../digest-store.ts";
import type { DigestAdmission, SharedUploads } from "../digest-store.ts";

const run = promisify(execFile);

/** What the store concluded about one uploaded package (persisted beside the tarball). */
export type PackageAdmission = DigestAdmission<{ name: string; version: string; admittedAt: number; bytes: number }>;

/**
 * Packages for Brain-managed JS hosts, by sha256 digest of the uploaded tarball, on disk:
 *   <dir>/<digest>.tgz    the bytes (npm pack layout: everything under `package/`, its
 *                          dependencies, when it carries them, under `package/node_modules/`)
 *   <dir>/<digest>.json   the PackageAdmission
 * Admission lists the archive with the system `tar` (nothing is unpacked into the runtime's own
 * folders, nothing is imported): a gzip tar whose entries all lie under `package/`, with
 * `package/package.json` naming the package.
 */
export class PackageStore extends DigestStore<{ name: string; version: string; admittedAt: number; bytes: number }> {
  constructor(dir: string, shared?: SharedUploads) {
    super(dir, "tgz", admitPackage, shared);
  }

  tarball(digest: string): string {
    return this.keptFile(digest);
  }
}

async function admitPackage(digest: string, file: string): Promise<PackageAdmission> {
  const refuse = (message: string): PackageAdmission => ({ status: "refused", digest, error: { code: "invalid_request", message: `package ${digest}: ${message}` } });
  try {
    const { stdout } = await run("tar", ["-tzf", file], { maxBuffer: 64 * 1024 * 1024 });
    const entries = stdout.split("\n").filter(Boolean);
    const outside = entries.find((e) => !e.startsWith("package/") || e.split("/").includes(".."));
    if (outside !== undefined) return refuse(`every entry must lie under package/ (npm pack layout), not ${JSON.stringify(outside)}`);
    if (!entries.includes("package/package.json")) return refuse("it has no package/package.json");
    const { stdout: text } = await run("tar", ["-xzOf", file, "package/package.json"], { maxBuffer: 4 * 1024 * 1024 });
    const pkg = JSON.parse(text) as { name?: unknown; version?: unknown };
    if (typeof pkg.name !== "string" || typeof pkg.version !== "string") return refuse("its package.json has no name and version");
    return { status: "admitted", digest, name: pkg.name, version: pkg.version, admittedAt: Date.now(), bytes: statSync(file).size };
  } catch (e) {
    return refuse(`not a gzip tar archive (npm pack output): ${(e instanceof Error ? e.message : String(e)).split("\n")[0]}`);
  }
}
