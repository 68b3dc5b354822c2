import type { IncomingMessage } from "node:http";

/**
 * DNS-rebinding protection of the MCP endpoint (the MCP transport spec: servers MUST validate the
 * Origin header, and local servers the Host): a page on evil.example.com whose name was rebound to
 * 127.0.0.1 sends `Host: evil.example.com`, and a browser always names its page in `Origin`. So a
 * request is served only when its Host is a loopback name or one the operator allowed, and its
 * Origin, when it has one, is on such a host too. Clients that are no browser send no Origin.
 */
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

export class OriginGuard {
  private allowed: Set<string>;

  /** `hosts`: host names (no port) served besides loopback ones: the public URL's, the operator's list. */
  constructor(hosts: Iterable<string>) {
    this.allowed = new Set([...hosts].map((h) => h.toLowerCase()));
  }

  /** Why the request is refused (a sentence for the 403), or undefined when it may be served. */
  refuse(req: IncomingMessage): string | undefined {
    const host = hostName(req.headers.host);
    if (host === undefined || !this.allows(host)) return `Host ${JSON.stringify(req.headers.host ?? "")} is not served by this MCP endpoint (DNS-rebinding protection: only loopback names and the operator's allowed hosts)`;
    const origin = req.headers.origin;
    if (origin === undefined) return undefined;
    let originHost: string;
    try {
      originHost = new URL(origin).hostname.toLowerCase();
    } catch {
      return `Origin ${JSON.stringify(origin)} is not a URL`;
    }
    if (!this.allows(originHost)) return `Origin ${JSON.stringify(origin)} is not allowed to call this MCP endpoint (DNS-rebinding protection)`;
    return undefined;
  }

  private allows(host: string): boolean {
    return LOOPBACK.has(host) || this.allowed.has(host);
  }
}

/** The host name of a Host header (`name:port`, `[v6]:port`), lowercased; undefined when absent or malformed. */
function hostName(header: string | undefined): string | undefined {
  if (header === undefined || header === "") return undefined;
  try {
    return new URL(`http://${header}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}
