import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";
import type { ErrorInfo } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";
import type { UploadShelf } from "../journal/shared-files.ts";
import { incomingDir, incomingPath, receiveToFile, sha256OfFile } from "./upload-file.ts";

/** What admission concluded about one uploaded digest (persisted as <dir>/<digest>.json). */
export type DigestAdmission<T extends object> =
  | ({ status: "admitted"; digest: string } & T)
  | { status: "refused"; digest: string; error: ErrorInfo };

/**
 * Admits the bytes of one digest: checks them and keeps, under `dir`, whatever the Environment needs
 * later (a transpilation). `file` holds the bytes (their sha256 is the digest), where the store keeps
 * them if they are admitted; admission reads it and leaves it in place. Called at most once per digest
 * at a time; the store persists and caches what it answers.
 */
export type AdmitDigest<T extends object> = (digest: string, file: string, dir: string) => Promise<DigestAdmission<T>>;

export const DIGEST_PATTERN = /^[0-9a-f]{64}$/;

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

  /** `extension`: the kept bytes of an admitted digest are <dir>/<digest>.<extension>. */
  constructor(readonly dir: string, private readonly extension: string, private admitFile: AdmitDigest<T>, private shared?: SharedUploads) {
    mkdirSync(dir, { recursive: true });
    // Uploads a previous process was receiving when it stopped: nobody is waiting for them.
    rmSync(incomingDir(dir), { recursive: true, force: true });
  }

  /** Where the bytes of an admitted digest are kept. */
  keptFile(digest: string): string {
    return join(this.dir, `${digest}.${this.extension}`);
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
    const file = incomingPath(this.dir);
    try {
      // Bytes that are not the digest's are no upload of it (the route checked them when they came).
      if (!(await this.shared.shelf.get(this.shared.kind, digest, file)) || (await sha256OfFile(file)) !== digest) return undefined;
      this.shelved.add(digest);
      return await this.admitOnce(digest, file);
    } finally {
      rmSync(file, { force: true });
    }
  }

  /**
   * Receives an upload of the digest from a stream (an HTTP body), written to disk as it arrives and
   * never held whole in memory, then admits it. Refused: a body of more than `limit` bytes
   * (body_too_large) and bytes whose sha256 is not `digest` (invalid_request).
   */
  async receive(digest: string, body: Readable, limit: number, noun: string): Promise<DigestAdmission<T>> {
    const got = await receiveToFile(body, this.dir, limit, noun);
    if (got.sha256 !== digest) {
      rmSync(got.file, { force: true });
      throw new BrainRuntimeError("invalid_request", `body sha256 is ${got.sha256}, not ${digest}`);
    }
    return this.putFile(digest, got.file);
  }

  /**
   * Admits the bytes in `file` (under this store's folder; their sha256 must equal `digest`, which
   * the caller checked) and, on several nodes, keeps them for the others. Idempotent per digest; the
   * file is moved into place or removed.
   */
  async putFile(digest: string, file: string): Promise<DigestAdmission<T>> {
    try {
      const a = this.get(digest) ?? (await this.admitOnce(digest, file));
      if (a.status === "admitted" && this.shared !== undefined && !this.shelved.has(digest)) {
        await this.shared.shelf.put(this.shared.kind, digest, this.keptFile(digest));
        this.shelved.add(digest);
      }
      return a;
    } finally {
      rmSync(file, { force: true });
    }
  }

  private admitOnce(digest: string, file: string): Promise<DigestAdmission<T>> {
    const known = this.get(digest);
    if (known) return Promise.resolve(known);
    const inflight = this.pending.get(digest);
    if (inflight) return inflight;
    const p = this.admit(digest, file).finally(() => this.pending.delete(digest));
    this.pending.set(digest, p);
    return p;
  }

  private async admit(digest: string, file: string): Promise<DigestAdmission<T>> {
    // The bytes go where an admitted digest's are kept (a rename, not a copy); refused ones are removed.
    const kept = this.keptFile(digest);
    renameSync(file, kept);
    const a = await this.admitFile(digest, kept, this.dir).catch((e: unknown) => {
      rmSync(kept, { force: true });
      throw e;
    });
    if (a.status !== "admitted") rmSync(kept, { force: true });
    const tmp = join(this.dir, `${digest}.json.tmp`);
    writeFileSync(tmp, JSON.stringify(a));
    renameSync(tmp, join(this.dir, `${digest}.json`));
    this.admissions.set(digest, a);
    return a;
  }
}
