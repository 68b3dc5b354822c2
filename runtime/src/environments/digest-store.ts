import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ErrorInfo } from "@aexhq/brain-protocol";

/** What admission concluded about one uploaded digest (persisted as <dir>/<digest>.json). */
export type DigestAdmission<T extends object> =
  | ({ status: "admitted"; digest: string } & T)
  | { status: "refused"; digest: string; error: ErrorInfo };

/**
 * Admits the bytes of one digest: checks them and keeps, under `dir`, whatever the Environment needs
 * later (the bytes, a transpilation). Called at most once per digest at a time; the store persists
 * and caches what it answers.
 */
export type AdmitDigest<T extends object> = (digest: string, bytes: Uint8Array, dir: string) => Promise<DigestAdmission<T>>;

export const DIGEST_PATTERN = /^[0-9a-f]{64}$/;

export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * Uploads by sha256 digest (components, packages), on disk: the admission record of each digest is
 * <dir>/<digest>.json, written atomically once admission has kept what it keeps beside it. Admission
 * runs once per digest (concurrent uploads of one digest share it); a restart reads the records back.
 */
export class DigestStore<T extends object> {
  private admissions = new Map<string, DigestAdmission<T>>();
  private pending = new Map<string, Promise<DigestAdmission<T>>>();

  constructor(readonly dir: string, private admitBytes: AdmitDigest<T>) {
    mkdirSync(dir, { recursive: true });
  }

  has(digest: string): boolean {
    return this.get(digest) !== undefined;
  }

  get(digest: string): DigestAdmission<T> | undefined {
    let a = this.admissions.get(digest);
    if (a === undefined && DIGEST_PATTERN.test(digest) && existsSync(join(this.dir, `${digest}.json`))) {
      a = JSON.parse(readFileSync(join(this.dir, `${digest}.json`), "utf8")) as DigestAdmission<T>;
      this.admissions.set(digest, a);
    }
    return a;
  }

  /** Stores and admits bytes whose sha256 must equal `digest` (the route checks it). Idempotent per digest. */
  put(digest: string, bytes: Uint8Array): Promise<DigestAdmission<T>> {
    const known = this.get(digest);
    if (known) return Promise.resolve(known);
    const inflight = this.pending.get(digest);
    if (inflight) return inflight;
    const p = this.admit(digest, bytes).finally(() => this.pending.delete(digest));
    this.pending.set(digest, p);
    return p;
  }

  private async admit(digest: string, bytes: Uint8Array): Promise<DigestAdmission<T>> {
    const a = await this.admitBytes(digest, bytes, this.dir);
    const tmp = join(this.dir, `${digest}.json.tmp`);
    writeFileSync(tmp, JSON.stringify(a));
    renameSync(tmp, join(this.dir, `${digest}.json`));
    this.admissions.set(digest, a);
    return a;
  }
}
