import type { IncomingMessage, ServerResponse } from "node:http";
import { BrainRuntimeError } from "../../errors.ts";
import { readBytes } from "./read-bytes.ts";
import { sendError, sendJson } from "../../http/respond.ts";
import { decodeSegment } from "../../http/path.ts";
import { sha256Hex } from "./store.ts";
import type { ComponentStore } from "./store.ts";

/** Components are larger than ordinary bodies (a componentize-js guest is ~12 MB). */
export const MAX_COMPONENT_BYTES = 64 * 1024 * 1024;

/**
 * PUT  /v1/components/:digest  body = the component bytes (application/wasm); admits once per digest.
 *      201 {digest, status:"admitted", admitMs} when newly admitted, 200 when already admitted,
 *      400 ErrorBody (invalid_request) when refused or when sha256(body) != digest, 413 when too large.
 * HEAD /v1/components/:digest  200 admitted, 404 unknown, 400 refused (PUT again to read why).
 * GET  /v1/components/:digest  200 the admission record, 404 unknown.
 */
export function componentRoute(store: ComponentStore) {
  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> => {
    const m = /^\/v1\/components\/([^/]+)\/?$/.exec(url.pathname);
    if (!m) return false;
    const method = req.method ?? "GET";
    try {
      const digest = decodeSegment(m[1]!, "component");
      if (!/^[0-9a-f]{64}$/.test(digest)) throw new BrainRuntimeError("invalid_request", "a component digest is 64 lowercase hex characters (sha256 of the bytes)");
      const known = store.get(digest);
      if (method === "HEAD") {
        res.writeHead(known === undefined ? 404 : known.status === "admitted" ? 200 : 400, { "content-length": 0 });
        res.end();
        return true;
      }
      if (method === "GET") {
        if (known === undefined) throw new BrainRuntimeError("not_found", `component ${digest} is unknown`);
        sendJson(res, 200, known);
        return true;
      }
      if (method !== "PUT") throw new BrainRuntimeError("invalid_request", `method ${method} is not allowed on ${url.pathname}`);
      if (known?.status === "admitted") {
        req.resume();
        sendJson(res, 200, { digest, status: "admitted", admitMs: known.admitMs });
        return true;
      }
      const bytes = await readBytes(req, MAX_COMPONENT_BYTES);
      const actual = sha256Hex(bytes);
      if (actual !== digest) throw new BrainRuntimeError("invalid_request", `body sha256 is ${actual}, not ${digest}`);
      const a = await store.put(digest, bytes);
      if (a.status === "refused") throw new BrainRuntimeError(a.error.code, a.error.message, a.error.details);
      sendJson(res, 201, { digest, status: "admitted", admitMs: a.admitMs });
    } catch (e) {
      sendError(res, e);
    }
    return true;
  };
}
