import type { IncomingMessage } from "node:http";
import { BrainRuntimeError } from "../errors.ts";

const ORIGIN = "http://localhost";

/**
 * The URL of a request, from its request target. The target is a path (`/v1/sessions`), so it is
 * appended to a fixed origin rather than resolved against it: `///` or `//host/x` stay paths (a
 * 404), never "Invalid URL" or another host. An absolute-form target (`http://h/p`, from a proxy)
 * keeps its path. A target that is neither is `not_found`.
 */
export function requestUrl(req: Pick<IncomingMessage, "url">): URL {
  const target = req.url ?? "/";
  try {
    if (target.startsWith("/")) return new URL(ORIGIN + target);
    const absolute = new URL(target);
    return new URL(ORIGIN + absolute.pathname + absolute.search);
  } catch (e) {
    throw new BrainRuntimeError("not_found", `no route for request target ${JSON.stringify(target.slice(0, 200))}`, undefined, undefined, { cause: e });
  }
}

/** One percent-encoded path segment (a session or host id): a bad escape or invalid UTF-8 is `not_found`, naming the segment. */
export function decodeSegment(raw: string, what: string): string {
  try {
    return decodeURIComponent(raw);
  } catch (e) {
    throw new BrainRuntimeError("not_found", `no ${what} ${JSON.stringify(raw.slice(0, 200))}: the path segment is not valid percent-encoded UTF-8`, undefined, undefined, { cause: e });
  }
}
