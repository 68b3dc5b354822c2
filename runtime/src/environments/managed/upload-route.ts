import type { IncomingMessage, ServerResponse } from "node:http";
import { BrainRuntimeError } from "../../errors.ts";
import { readBytes } from "../component/read-bytes.ts";
import { sha256Hex } from "../component/store.ts";
import { sendError, sendJson } from "../../http/respond.ts";
import { decodeSegment } from "../../http/path.ts";
import type { PackageStore } from "./package-store.ts";

/** A package with its dependencies may be larger than a component. */
export const MAX_PACKAGE_BYTES = 128 * 1024 * 1024;

/**
 * PUT  /v1/packages/:digest  body = the package tarball (npm pack layout, dependencies may ride
 *      under package/node_modules/); 201 {digest, status:"admitted", name, version}, 200 when
 *      already admitted, 400 invalid_request when refused or sha256(body) != digest.
 * HEAD /v1/packages/:digest  200 admitted, 404 unknown, 400 refused.
 * GET  /v1/packages/:digest  the admission record.
 */
export function packageRoute(store: PackageStore) {
  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> => {
    const m = /^\/v1\/packages\/([^/]+)\/?$/.exec(url.pathname);
    if (!m) return false;
    const method = req.method ?? "GET";
    try {
      const digest = decodeSegment(m[1]!, "package");
      if (!/^[0-9a-f]{64}$/.test(digest)) throw new BrainRuntimeError("invalid_request", "a package digest is 64 lowercase hex characters (sha256 of the tarball)");
      const known = store.get(digest);
      if (method === "HEAD") {
        res.writeHead(known === undefined ? 404 : known.status === "admitted" ? 200 : 400, { "content-length": 0 });
        res.end();
        return true;
      }
      if (method === "GET") {
        if (known === undefined) throw new BrainRuntimeError("not_found", `package ${digest} is unknown`);
        sendJson(res, 200, known);
        return true;
      }
      if (method !== "PUT") throw new BrainRuntimeError("invalid_request", `method ${method} is not allowed on ${url.pathname}`);
      if (known?.status === "admitted") {
        req.resume();
        sendJson(res, 200, { digest, status: "admitted", name: known.name, version: known.version });
        return true;
      }
      const bytes = await readBytes(req, MAX_PACKAGE_BYTES);
      const actual = sha256Hex(bytes);
      if (actual !== digest) throw new BrainRuntimeError("invalid_request", `body sha256 is ${actual}, not ${digest}`);
      const a = await store.put(digest, bytes);
      if (a.status === "refused") throw new BrainRuntimeError(a.error.code, a.error.message, a.error.details);
      sendJson(res, 201, { digest, status: "admitted", name: a.name, version: a.version });
    } catch (e) {
      sendError(res, e);
    }
    return true;
  };
}
