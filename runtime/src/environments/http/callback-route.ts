import type { IncomingMessage, ServerResponse } from "node:http";
import type { HttpCallbackRequest } from "@aexhq/brain-protocol";
import { readValid } from "../../http/body.ts";
import { decodeSegment } from "../../http/path.ts";
import { sendError, sendJson } from "../../http/respond.ts";
import type { HttpToolEnvironment } from "./environment.ts";

/**
 * POST /v1/calls/:callId/http — authorized by the call's own token, not the operator token: the
 * application serving HTTP tools holds no Brain credentials beyond the call it is answering.
 */
export function httpCallbackRoute(env: HttpToolEnvironment) {
  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> => {
    const m = /^\/v1\/calls\/([^/]+)\/http\/?$/.exec(url.pathname);
    if (!m || req.method !== "POST") return false;
    try {
      const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1]?.trim();
      // The token is checked before the body is read: a stranger's body is never parsed.
      const open = env.authorize(decodeSegment(m[1]!, "call"), bearer);
      const body = await readValid<HttpCallbackRequest>(req, "HttpCallbackRequest");
      sendJson(res, 200, await env.callback(open, body));
    } catch (e) {
      sendError(res, e);
    }
    return true;
  };
}
