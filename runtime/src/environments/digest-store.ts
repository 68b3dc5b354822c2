import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ErrorInfo } from "@aexhq/brain-protocol";
import type { UploadShelf } from "../journal/shared-files.ts";

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

/** Where uploads are kept for every node of several (journal/shared-files.ts), and under which kind. */
export interface SharedUploads {
  shelf: UploadShelf;
  kind: string;
}

/**
 * Uploads by sha256 digest (components, packages), on disk: the admission record of each digest is
 * <dir>/<digest>.json, written atomically once admission has kept what it keeps beside it. Admission
 * runs once per digest (concurrent uploads of one digest share it); a restart reads the records back.
 *
 * On several nodes (`shared`), an admitted upload's bytes are also kept in the database, and a node
 * asked for a digest it has not seen admits it from there (`obtain`): an upload made through one
 * node is placed and run through any (issue 28). Each node keeps its own admission and
 * transpilation on its own disk, made once per digest.
 */
export class DigestStore<T extends object> {
  private admissions = new Map<string, DigestAdmission<T>>();
  private pending = new Map<string, Promise<DigestAdmission<T>>>();
  /** Digests known to be on the shared shelf (put or found there by this process). */
  private shelved = new Set<string>();

  constructor(readonly dir: string, private admitBytes: AdmitDigest<T>, private shared?: SharedUploads) {
    mkdirSync(dir, { recursive: true });
  }

  has(digest: string): boolean {
    return this.get(digest) !== undefined;
  }

  /** What this node admitted of the digest (synchronously, from memory or its disk). */
  get(digest: string): DigestAdmission<T> | undefined {
    let a = this.admissions.get(digest);
    if (a === undefined && DIGEST_PATTERN.test(digest) && existsSync(join(this.dir, `${digest}.json`))) {
      a = JSON.parse(readFileSync(join(this.dir, `${digest}.json`), "utf8")) as DigestAdmission<T>;
      this.admissions.set(digest, a);
    }
    return a;
  }

  /** Whether an upload of the digest has nothing left to do: admitted here and, on several nodes, kept for the others. */
  complete(digest: string): boolean {
    return this.get(digest)?.status === "admitted" && (this.shared === undefined || this.shelved.has(digest));
  }

  /**
   * What any node admitted of the digest: this node's admission, else (several nodes) the upload
   * made through another node, admitted here now; undefined for a digest never uploaded.
   */
  async obtain(digest: string): Promise<DigestAdmission<T> | undefined> {
    const known = this.get(digest);
    if (known !== undefined || this.shared === undefined || !DIGEST_PATTERN.test(digest)) return known;
    const bytes = await this.shared.shelf.get(this.shared.kind, digest);
    // Bytes that are not the digest's are no upload of it (the route checked them when they came).
    if (bytes === undefined || sha256Hex(bytes) !== digest) return undefined;
    this.shelved.add(digest);
    return this.admitOnce(digest, bytes);
  }

  /** Stores and admits bytes whose sha256 must equal `digest` (the route checks it). Idempotent per digest. */
  async put(digest: string, bytes: Uint8Array): Promise<DigestAdmission<T>> {
    const a = this.get(digest) ?? (await this.admitOnce(digest, bytes));
    if (a.status === "admitted" && this.shared !== undefined && !this.shelved.has(digest)) {
      await this.shared.shelf.put(this.shared.kind, digest, bytes);
      this.shelved.add(digest);
    }
    return a;
  }

  private admitOnce(digest: string, bytes: Uint8Array): Promise<DigestAdmission<T>> {
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
