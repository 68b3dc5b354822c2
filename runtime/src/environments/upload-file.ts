import { createHash, randomBytes } from "node:crypto";
import { createReadStream, createWriteStream, mkdirSync, rmSync } from "node:fs";
import type { Readable } from "node:stream";
import { join } from "node:path";
import { BrainRuntimeError } from "../errors.ts";

/** An upload's bytes in a file of the store's folder, with what was learnt while writing it. */
export interface ReceivedFile {
  file: string;
  sha256: string;
  bytes: number;
}

/** The folder of a store that holds bytes being received or waiting for their admission. */
export function incomingDir(dir: string): string {
  return join(dir, ".incoming");
}

/**
 * A fresh name for bytes arriving into the store at `dir`, under `.incoming/` (files there belong
 * to an upload in progress; a restart may leave some behind, and the store empties the folder when
 * it starts).
 */
export function incomingPath(dir: string): string {
  mkdirSync(incomingDir(dir), { recursive: true });
  return join(incomingDir(dir), randomBytes(12).toString("hex"));
}

/**
 * Writes a body to a new file under the store's `dir` as it arrives, hashing it on the way, so an
 * upload of many megabytes never sits in the runtime's memory whole (issue 35); the socket is paused
 * while the disk catches up. A body larger than `limit` stops being written at the first chunk past
 * it and its file is removed; the rest is drained (up to 4× the limit, then the connection is cut)
 * so the client reads the 413 body_too_large. A body cut short is invalid_request; a disk that
 * refuses the write is unavailable (retryable). Nothing is left on disk when this rejects.
 */
export function receiveToFile(source: Readable, dir: string, limit: number, noun: string): Promise<ReceivedFile> {
  const file = incomingPath(dir);
  const out = createWriteStream(file);
  const hash = createHash("sha256");
  let bytes = 0;
  let tooLarge = false;
  let ended = false;
  // The file is opened asynchronously: it is removed once the stream has closed (or open could
  // create it again after the removal), and a rejection waits for that, so a caller that was refused
  // finds nothing left.
  let removed: Promise<void> | undefined;
  const discard = (): Promise<void> =>
    (removed ??= new Promise<void>((done) => {
      const rm = () => {
        rmSync(file, { force: true });
        done();
      };
      if (out.closed) rm();
      else out.once("close", rm);
      out.destroy();
    }));
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (e: BrainRuntimeError): void => {
      if (settled) return;
      settled = true;
      void discard().then(() => reject(e));
    };
    const overLimit = () => new BrainRuntimeError("body_too_large", `${noun} exceeds ${limit} bytes`);
    source.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (tooLarge) {
        if (bytes > limit * 4) source.destroy();
        return;
      }
      if (bytes > limit) {
        tooLarge = true;
        void discard();
        return;
      }
      hash.update(chunk);
      if (!out.write(chunk)) {
        source.pause();
        out.once("drain", () => source.resume());
      }
    });
    source.on("end", () => {
      ended = true;
      if (tooLarge) return fail(overLimit());
      out.end(() => {
        if (settled) return;
        settled = true;
        resolve({ file, sha256: hash.digest("hex"), bytes });
      });
    });
    source.on("error", (e) => fail(new BrainRuntimeError("invalid_request", `the ${noun} upload ended before its last byte: ${e.message}`, undefined, undefined, { cause: e })));
    source.on("close", () => {
      if (!ended) fail(tooLarge ? overLimit() : new BrainRuntimeError("invalid_request", `the ${noun} upload ended before its last byte`));
    });
    out.on("error", (e) => {
      if (tooLarge) return;
      source.destroy();
      fail(new BrainRuntimeError("unavailable", `this node could not keep the ${noun} on its disk: ${e.message}`, undefined, true, { cause: e }));
    });
  });
}

/** The sha256 of a file, read as a stream (never whole). */
export async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}
