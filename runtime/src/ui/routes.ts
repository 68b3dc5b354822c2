import type { IncomingMessage, ServerResponse } from "node:http";
import { readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { BrainRuntimeError } from "../errors.ts";
import type { Route } from "../http/routes.ts";
import { sendError } from "../http/respond.ts";
import { tokensEqual } from "../credentials/secret.ts";
import { MemoryLogins } from "./logins.ts";
import type { Login, LoginKeeper } from "./logins.ts";

/**
 * The session viewer at /ui: a login form, the page shell and its static assets (plain HTML, CSS
 * and an ES module, no build step; docs/decisions/ui.md). The page reads the ordinary HTTP API
 * (GET /v1/sessions, GET /v1/sessions/:id, its events over SSE) with the credential the person
 * logged in with, so it sees exactly what that credential sees through the API.
 *
 * The credential (an API key or the operator token) is posted once by the login form and kept
 * server-side; the browser holds only an opaque id in an HttpOnly, SameSite=Strict cookie. For GET
 * requests under /v1/sessions that carry that cookie and no Authorization header, this route fills
 * in `Authorization: Bearer <credential>` and lets the API handle the request as usual; likewise for
 * GET /v1/hosts and GET /v1/keys (`READS`: the operator's hosts and keys pages; an API key gets 403).
 *
 * The page also acts on sessions through the same API (send a message, cancel a call or a turn,
 * delete, decide an approval: `ACTIONS`). Such a request is bridged only when it also carries the
 * login's own anti-forgery token (`x-brain-csrf`, given to the page in its HTML and never in a
 * cookie) and, when the browser sends one, an Origin of this server: another site can neither read
 * the token nor send the header without a CORS preflight this server never answers.
 */

export const UI_COOKIE = "brain_ui";
const ASSETS = new URL("./assets/", import.meta.url);
const JS = "text/javascript; charset=utf-8";
/**
 * What /ui/assets/<name> serves, and where from: the page's modules (one per thing it shows), its
 * style and icon, and journal-rules.js, the runtime's own module of the journal's rules
 * (journal/journal-rules.js, read here by path, not imported): the page folds records with the code
 * SessionState does.
 */
const ASSET_FILES: Record<string, { type: string; url: URL }> = {
  ...Object.fromEntries(
    ["app.js", "nav.js", "dom.js", "api.js", "actions.js", "list.js", "session.js", "timeline.js", "rows.js", "axis.js", "call-panel.js", "hosts.js", "keys.js"].map((name) => [name, { type: JS, url: new URL(name, ASSETS) }]),
  ),
  "journal-rules.js": { type: JS, url: new URL("../journal/journal-rules.js", import.meta.url) },
  "app.css": { type: "text/css; charset=utf-8", url: new URL("app.css", ASSETS) },
  "favicon.svg": { type: "image/svg+xml", url: new URL("favicon.svg", ASSETS) },
};
/** The asset names /ui serves (the npm package test fetches each). */
export const UI_ASSETS = Object.keys(ASSET_FILES);
const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
};
const MAX_LOGIN_BODY = 16 * 1024;
const DEFAULT_TTL_MS = 12 * 60 * 60 * 1000;
/** What the page may do with a login (method and path), each answered by the ordinary API. */
const ACTIONS: ReadonlyArray<readonly [string, RegExp]> = [
  ["POST", /^\/v1\/sessions\/[^/]+\/(?:messages|cancel|calls\/[^/]+\/approval)$/],
  ["DELETE", /^\/v1\/sessions\/[^/]+$/],
];
/** The header the page sends its login's anti-forgery token in. */
export const CSRF_HEADER = "x-brain-csrf";
/** Where a login may send the browser back to: the list, one session's page, the hosts or keys page. */
const PAGE = /^\/ui(?:\/sessions\/[^/?#]+|\/hosts|\/keys)?$/;
/**
 * The reads the page makes with a login besides sessions: the operator's hosts and keys pages. The
 * API decides who may (an API key's login gets its 403), as for any request with that credential.
 */
const READS = new Set(["/v1/hosts", "/v1/keys"]);

export interface UiOptions {
  /** Whether a credential is one the API accepts (the operator token or an API key); several nodes may look the keys up again first. */
  accepts(credential: string): boolean | Promise<boolean>;
  /** Whether a credential is the operator token (the page then links the hosts and keys pages and names sessions' owners). */
  isOperator?(credential: string): boolean;
  /** How long a login lasts; default 12 hours. */
  ttlMs?: number;
  /** Where logins are kept: this process's memory by default; several nodes share theirs (ui/logins.ts SharedLogins). */
  logins?: LoginKeeper;
  /**
   * The trace ids of a session's recent calls, for the call panel's Trace link (docs/observability.md),
   * and the trace viewer's URL template (`{traceId}`), if the operator gave one. Rejects `not_found`
   * for a session the credential may not see.
   */
  traces?(sessionId: string, credential: string): Promise<{ traces: Record<string, string>; url?: string }>;
}

/** The /ui routes and the cookie bridge; goes in the server's `open` route list (it authorizes its requests itself). */
export function uiRoute(opts: UiOptions): Route {
  const ttl = opts.ttlMs ?? DEFAULT_TTL_MS;
  /** Login id (the cookie value) → credential. */
  const logins = opts.logins ?? new MemoryLogins();
  const cache = new Map<string, Buffer>();
  const asset = (name: string): Buffer => {
    let b = cache.get(name);
    if (b === undefined) cache.set(name, (b = readFileSync(ASSET_FILES[name]?.url ?? new URL(name, ASSETS))));
    return b;
  };

  const loginOf = async (req: IncomingMessage): Promise<Login | undefined> => {
    const id = cookie(req, UI_COOKIE);
    if (id === undefined) return undefined;
    const login = await logins.load(id);
    if (login === undefined) return undefined;
    // Expired, or its key deleted since the login: the login goes with it.
    if (login.expiresAt <= Date.now() || !(await opts.accepts(login.credential))) {
      await logins.remove(id);
      return undefined;
    }
    return login;
  };

  const page = (res: ServerResponse, status: number, html: string): void => {
    res.writeHead(status, { ...SECURITY_HEADERS, "content-type": "text/html; charset=utf-8", "cache-control": "no-store", "content-length": Buffer.byteLength(html) });
    res.end(html);
  };
  const loginPage = (res: ServerResponse, status: number, next: string, message?: string): void => {
    const html = asset("login.html")
      .toString("utf8")
      .replace("{{next}}", escapeHtml(next))
      .replace("{{message}}", message === undefined ? "" : `<p class="message" role="alert" id="login-error">${escapeHtml(message)}</p>`);
    page(res, status, html);
  };

  return async (req, res, url) => {
    const method = req.method ?? "GET";
    const path = url.pathname;

    // The cookie bridge: reads of the sessions API from the page, and of the hosts and keys lists.
    if ((path === "/v1/sessions" || path.startsWith("/v1/sessions/") || READS.has(path.replace(/\/+$/, ""))) && method === "GET" && req.headers.authorization === undefined) {
      try {
        const login = await loginOf(req);
        if (login !== undefined) req.headers.authorization = `Bearer ${login.credential}`;
      } catch (e) {
        sendError(res, e);
        return true;
      }
      return false;
    }
    // Its actions: the cookie and the login's anti-forgery token, from this server's own page.
    if (req.headers.authorization === undefined && ACTIONS.some(([m, re]) => m === method && re.test(path.replace(/\/+$/, "")))) {
      let login: Login | undefined;
      try {
        login = await loginOf(req);
        if (login === undefined) return false; // the API answers 401
        sameOrigin(req);
        if (!tokensEqual(String(req.headers[CSRF_HEADER] ?? ""), login.csrf)) throw new BrainRuntimeError("forbidden", `an action from the page needs the login's ${CSRF_HEADER} header (reload the page)`);
      } catch (e) {
        sendError(res, e);
        return true;
      }
      req.headers.authorization = `Bearer ${login.credential}`;
      return false;
    }
    if (path !== "/ui" && !path.startsWith("/ui/")) return false;
    try {
      const bare = path.replace(/\/+$/, "") || "/";
      if (bare.startsWith("/ui/assets/")) {
        const name = bare.slice("/ui/assets/".length);
        const type = Object.hasOwn(ASSET_FILES, name) ? ASSET_FILES[name]!.type : undefined;
        if (type === undefined || method !== "GET") throw new BrainRuntimeError("not_found", `no route ${method} ${path}`);
        const body = asset(name);
        res.writeHead(200, { ...SECURITY_HEADERS, "content-type": type, "cache-control": "no-cache", "content-length": body.length });
        res.end(body);
        return true;
      }
      if (bare === "/ui/login") {
        if (method !== "POST") throw new BrainRuntimeError("not_found", `no route ${method} ${path}`);
        sameOrigin(req);
        const form = await readForm(req);
        const next = PAGE.test(form.get("next") ?? "") ? form.get("next")! : "/ui";
        const credential = (form.get("credential") ?? "").trim();
        if (credential === "" || !(await opts.accepts(credential))) {
          loginPage(res, credential === "" ? 400 : 401, next, credential === "" ? "Enter an API key or the operator token." : "That key or token is not accepted.");
          return true;
        }
        const id = randomBytes(32).toString("base64url");
        await logins.save(id, { credential, expiresAt: Date.now() + ttl, csrf: randomBytes(32).toString("base64url") });
        res.writeHead(303, { ...SECURITY_HEADERS, location: next, "cache-control": "no-store", "set-cookie": `${UI_COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${Math.floor(ttl / 1000)}`, "content-length": 0 });
        res.end();
        return true;
      }
      if (bare === "/ui/logout") {
        if (method !== "POST") throw new BrainRuntimeError("not_found", `no route ${method} ${path}`);
        sameOrigin(req);
        const id = cookie(req, UI_COOKIE);
        if (id !== undefined) await logins.remove(id);
        res.writeHead(303, { ...SECURITY_HEADERS, location: "/ui", "cache-control": "no-store", "set-cookie": `${UI_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`, "content-length": 0 });
        res.end();
        return true;
      }
      const traced = /^\/ui\/traces\/([^/]+)$/.exec(bare);
      if (traced !== null && method === "GET") {
        const login = await loginOf(req);
        if (login === undefined) throw new BrainRuntimeError("unauthorized", "log in at /ui first");
        const body = opts.traces === undefined ? { traces: {} } : await opts.traces(decodeURIComponent(traced[1]!), login.credential);
        const text = JSON.stringify(body);
        res.writeHead(200, { ...SECURITY_HEADERS, "content-type": "application/json; charset=utf-8", "cache-control": "no-store", "content-length": Buffer.byteLength(text) });
        res.end(text);
        return true;
      }
      if (PAGE.test(bare)) {
        if (method !== "GET") throw new BrainRuntimeError("not_found", `no route ${method} ${path}`);
        const login = await loginOf(req);
        if (login === undefined) loginPage(res, 200, bare);
        else page(res, 200, asset("app.html").toString("utf8").replace("{{csrf}}", login.csrf).replace("{{principal}}", opts.isOperator?.(login.credential) === true ? "operator" : "key"));
        return true;
      }
      throw new BrainRuntimeError("not_found", `no route ${method} ${path}`);
    } catch (e) {
      sendError(res, e);
      return true;
    }
  };
}

function cookie(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

/** A form post or an action from another site (CSRF) is refused; browsers send Origin with every POST and DELETE. */
function sameOrigin(req: IncomingMessage): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch (e) {
    throw new BrainRuntimeError("forbidden", `a form posted from origin ${JSON.stringify(origin)} is not accepted`, undefined, undefined, { cause: e });
  }
  if (host !== req.headers.host) throw new BrainRuntimeError("forbidden", `a form posted from ${origin} is not accepted`);
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") throw new BrainRuntimeError("invalid_request", `the login form is sent as application/x-www-form-urlencoded, got ${JSON.stringify(type)}`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_LOGIN_BODY) throw new BrainRuntimeError("body_too_large", `the login form is over ${MAX_LOGIN_BODY} bytes`);
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
