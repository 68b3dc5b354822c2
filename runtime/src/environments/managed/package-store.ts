import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type { ErrorInfo } from "@aexhq/brain-protocol";

const run = promisify(execFile);

/** What the store concluded about one uploaded package (persisted beside the tarball). */
export type PackageAdmission =
  | { status: "admitted"; digest: string; name: string; version: string; admittedAt: number; bytes: number }
  | { status: "refused"; digest: string; error: ErrorInfo };

/**
 * Packages for Brain-managed JS hosts, by sha256 digest of the uploaded tarball, on disk:
 *   <dir>/<digest>.tgz    the bytes (npm pack layout: everything under `package/`, its
 *                          dependencies, when it carries them, under `package/node_modules/`)
 *   <dir>/<digest>.json   the PackageAdmission
 * Admission lists the archive with the system `tar` (nothing is unpacked into the runtime's own
 * folders, nothing is imported): a gzip tar whose entries all lie under `package/`, with
 * `package/package.json` naming the package.
 */
export class PackageStore {
  private admissions = new Map<string, PackageAdmission>();
  private pending = new Map<string, Promise<PackageAdmission>>();

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  get(digest: string): PackageAdmission | undefined {
    let a = this.admissions.get(digest);
    if (a === undefined && /^[0-9a-f]{64}$/.test(digest) && existsSync(join(this.dir, `${digest}.json`))) {
      a = JSON.parse(readFileSync(join(this.dir, `${digest}.json`), "utf8")) as PackageAdmission;
      this.admissions.set(digest, a);
    }
    return a;
  }

  tarball(digest: string): string {
    return join(this.dir, `${digest}.tgz`);
  }

  put(digest: string, bytes: Uint8Array): Promise<PackageAdmission> {
    const known = this.get(digest);
    if (known) return Promise.resolve(known);
    const inflight = this.pending.get(digest);
    if (inflight) return inflight;
    const p = this.admit(digest, bytes).finally(() => this.pending.delete(digest));
    this.pending.set(digest, p);
    return p;
  }

  private async admit(digest: string, bytes: Uint8Array): Promise<PackageAdmission> {
    const tmp = join(this.dir, `${digest}.tgz.tmp`);
    writeFileSync(tmp, bytes);
    const refuse = (message: string): PackageAdmission => ({ status: "refused", digest, error: { code: "invalid_request", message: `package ${digest}: ${message}` } });
    let a: PackageAdmission;
    try {
      const { stdout } = await run("tar", ["-tzf", tmp], { maxBuffer: 64 * 1024 * 1024 });
      const entries = stdout.split("\n").filter(Boolean);
      const outside = entries.find((e) => !e.startsWith("package/") || e.split("/").includes(".."));
      if (outside !== undefined) a = refuse(`every entry must lie under package/ (npm pack layout), not ${JSON.stringify(outside)}`);
      else if (!entries.includes("package/package.json")) a = refuse("it has no package/package.json");
      else {
        const { stdout: text } = await run("tar", ["-xzOf", tmp, "package/package.json"], { maxBuffer: 4 * 1024 * 1024 });
        const pkg = JSON.parse(text) as { name?: unknown; version?: unknown };
        if (typeof pkg.name !== "string" || typeof pkg.version !== "string") a = refuse("its package.json has no name and version");
        else a = { status: "admitted", digest, name: pkg.name, version: pkg.version, admittedAt: Date.now(), bytes: bytes.byteLength };
      }
    } catch (e) {
      a = refuse(`not a gzip tar archive (npm pack output): ${(e instanceof Error ? e.message : String(e)).split("\n")[0]}`);
    }
    if (a.status === "admitted") renameSync(tmp, this.tarball(digest));
    const rec = join(this.dir, `${digest}.json.tmp`);
    writeFileSync(rec, JSON.stringify(a));
    renameSync(rec, join(this.dir, `${digest}.json`));
    this.admissions.set(digest, a);
    return a;
  }
}
