import type { IncomingMessage, ServerResponse } from "node:http";
import { BrainRuntimeError } from "../errors.ts";
import { sendError, sendJson } from "../http/respond.ts";
import { decodeSegment } from "../http/path.ts";
import { DIGEST_PATTERN } from "./digest-store.ts";
import type { DigestStore } from "./digest-store.ts";

export interface DigestUploadRoute<T extends object> {
  /** The collection: `components` serves /v1/components/:digest. */
  collection: string;
  /** What one upload is called in errors: `component`, `package`. */
  noun: string;
  /** What the digest is the sha256 of, for the error about a malformed digest: "the bytes". */
  of: string;
  maxBytes: number;
  store: DigestStore<T>;
  /** The fields of an admitted upload a PUT answers with, besides digest and status. */
  answer(admitted: { digest: string } & T): Record<string, unknown>;
}

/**
 * An upload by sha256 digest (components, packages):
 * PUT  /v1/<collection>/:digest  body = the bytes, streamed to disk as they arrive; admits once per digest.
 *      201 {digest, status:"admitted", ...answer} when newly admitted, 200 when already admitted,
 *      400 ErrorBody (invalid_request) when refused or sha256(body) != digest, 413 when too large.
 * HEAD /v1/<collection>/:digest  200 admitted, 404 unknown, 400 refused (PUT again to read why).
 * GET  /v1/<collection>/:digest  200 the admission record, 404 unknown.
 */
export function digestUploadRoute<T extends object>(opts: DigestUploadRoute<T>) {
  const { collection, noun, store } = opts;
  const path = new RegExp(`^/v1/${collection}/([^/]+)/?$`);
  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> => {
    const m = path.exec(url.pathname);
    if (!m) return false;
    const method = req.method ?? "GET";
    try {
      const digest = decodeSegment(m[1]!, noun);
      if (!DIGEST_PATTERN.test(digest)) throw new BrainRuntimeError("invalid_request", `a ${noun} digest is 64 lowercase hex characters (sha256 of ${opts.of})`);
      // Several nodes: an upload made through another node is found (and admitted here) too.
      const known = await store.obtain(digest);
      if (method === "HEAD") {
        res.writeHead(known === undefined ? 404 : known.status === "admitted" ? 200 : 400, { "content-length": 0 });
        res.end();
        return true;
      }
      if (method === "GET") {
        if (known === undefined) throw new BrainRuntimeError("not_found", `${noun} ${digest} is unknown`);
        sendJson(res, 200, known);
        return true;
      }
      if (method !== "PUT") throw new BrainRuntimeError("invalid_request", `method ${method} is not allowed on ${url.pathname}`);
      // Admitted here but not yet kept for the other nodes (that write failed): the body is read and kept now.
      if (known?.status === "admitted" && store.complete(digest)) {
        req.resume();
        sendJson(res, 200, { digest, status: "admitted", ...opts.answer(known) });
        return true;
      }
      // Written to disk as it arrives (never whole in memory), hashed on the way.
      const a = await store.receive(digest, req, opts.maxBytes, noun);
      if (a.status === "refused") throw BrainRuntimeError.of(a.error);
      sendJson(res, 201, { digest, status: "admitted", ...opts.answer(a) });
    } catch (e) {
      sendError(res, e);
    }
    return true;
  };
}
