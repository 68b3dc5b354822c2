import type { IncomingMessage } from "node:http";
import { BrainRuntimeError } from "../errors.ts";

/** Reads a binary body of at most `limit` bytes; a larger one is refused with body_too_large. */
export function readBytes(req: IncomingMessage, limit: number, noun = "body"): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        chunks.length = 0;
        req.destroy();
        reject(new BrainRuntimeError("body_too_large", `${noun} exceeds ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(new Uint8Array(Buffer.concat(chunks))));
    req.on("error", reject);
  });
}
