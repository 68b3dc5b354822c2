import type { IncomingMessage, ServerResponse } from "node:http";
import { PROTOCOL } from "@aexhq/brain-protocol";
import type { ApprovalRequest, CancelRequest, CreateKeyRequest, CreatedApiKey, KeyList, CreateSessionRequest, EventsResponse, HealthResponse, SendMessageRequest, SendMessageResponse, UpdateKeyRequest } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";
import type { MessageAdmission, SessionManager } from "../sessions/manager.ts";
import type { TurnEnd } from "../agentloop/loop.ts";
import type { JournalStore } from "../journal/store.ts";
import { ownerOf } from "../credentials/keys.ts";
import type { Redactor } from "../redact.ts";
import type { Telemetry } from "../telemetry/telemetry.ts";
import type { KeyRing, Principal } from "../credentials/keys.ts";
import { readValid } from "./body.ts";
import { decodeSegment, requestUrl } from "./path.ts";
import { explainUnsupported } from "./unsupported-placement.ts";
import { sendError, sendJson } from "./respond.ts";
import { streamEvents } from "./sse.ts";
import type { OpenStreams } from "./sse.ts";
import { listQuery, listSessions } from "./sessions-list.ts";
import { authorizeSession } from "./session-access.ts";
import type { TenantGate } from "../limits/tenant-gate.ts";

export const VERSION = "0.2.0";

/** An extra route: returns true when it handled the request. */
export type Route = (req: IncomingMessage, res: ServerResponse, url: URL, principal?: Principal) => Promise<boolean> | boolean;

export interface RouteDeps {
  /** Error bodies and turn errors never carry the server's secrets. */
  redactor?: Redactor;
  /** The span of each request (a message's turn is traced under it), when tracing is on. */
  telemetry?: Telemetry;
  /** Who a bearer token stands for, and the operator's key administration. */
  keys: KeyRing;
  sessions: SessionManager;
  /** Open SSE streams under the key that opened each: a revoked key's end at once, all end on shutdown. */
  streams: OpenStreams;
  /** API keys' request rate, sessions open and SSE streams (limits/tenant-gate.ts). */
  tenants: TenantGate;
  /** How long one SSE stream lasts at most (BRAIN_MAX_STREAM_MS); default DEFAULT_MAX_STREAM_MS. */
  maxStreamMs?: number;
  /** Listing pages come from the store's index (http/sessions-list.ts). */
  store: JournalStore;
  /** Extra routes (the component upload route plugs in here). Return true when handled. */
  extra: Route[];
  /** Routes tried before the operator token is checked: each authorizes its requests itself. */
  open: Route[];
  /**
   * The longest a `wait: true` message is held (BRAIN_MAX_WAIT_MS): a turn still running then is
   * answered 202 started, and the client asks again with the same Idempotency-Key.
   */
  maxWaitMs: number;
}

/** Default of RouteDeps.maxWaitMs / BRAIN_MAX_WAIT_MS. */
export const DEFAULT_MAX_WAIT_MS = 60_000;

/** The answer header of a message answered from an earlier request with the same Idempotency-Key. */
const REPLAYED = { "idempotent-replayed": "true" } as const;

/** The principal of the request's bearer token: the operator token or a live API key; else 401. */
function authorize(req: IncomingMessage, keys: KeyRing): Principal {
  const header = req.headers.authorization ?? "";
  const match = /^Bearer\s+(.+)$/i.exec(header);
  const principal = match ? keys.authenticate(match[1]!.trim()) : undefined;
  if (principal === undefined) throw new BrainRuntimeError("unauthorized", "missing or wrong bearer token (the operator token or a live API key)");
  return principal;
}

/** The HTTP API of the issue; every body goes through the generated validators. */
export async function handle(req: IncomingMessage, res: ServerResponse, deps: RouteDeps): Promise<void> {
  try {
    const url = requestUrl(req);
    const method = req.method ?? "GET";
    const path = url.pathname.replace(/\/+$/, "") || "/";
    if (path === "/healthz" && method === "GET") {
      const body: HealthResponse = { ok: true, version: VERSION, protocol: PROTOCOL };
      return sendJson(res, 200, body);
    }
    for (const route of deps.open) if (await route(req, res, url)) return;
    const principal = authorize(req, deps.keys);
    deps.tenants.request(ownerOf(principal));
    if (path === "/v1/keys" || path.startsWith("/v1/keys/")) return await keysRoute(req, res, method, path, principal, deps);
    for (const route of deps.extra) if (await route(req, res, url, principal)) return;
    const s = deps.sessions;
    if (path === "/v1/sessions") {
      if (method === "POST") {
        const body = await readValid<CreateSessionRequest>(req, "CreateSessionRequest", explainUnsupported);
        const owner = ownerOf(principal);
        return sendJson(res, 201, await deps.tenants.session(owner, () => s.create(body, owner)));
      }
      if (method === "GET") return sendJson(res, 200, await listSessions(deps.store, s, listQuery(url.searchParams, principal)));
      throw methodNotAllowed(method, path);
    }
    const approval = /^\/v1\/sessions\/([^/]+)\/calls\/([^/]+)\/approval$/.exec(path);
    if (approval) {
      const id = decodeSegment(approval[1]!, "session");
      await authorizeSession(s, id, principal);
      if (method !== "POST") throw methodNotAllowed(method, path);
      const sequence = callSequence(approval[2]!);
      const body = await readValid<ApprovalRequest>(req, "ApprovalRequest");
      // Who decides is who the runtime authenticated, never a field of the request.
      return sendJson(res, 200, await s.decide(id, sequence, body, deps.keys.decider(principal)));
    }
    const m = /^\/v1\/sessions\/([^/]+)(?:\/(messages|cancel|events))?$/.exec(path);
    if (!m) throw new BrainRuntimeError("not_found", `no route ${method} ${path}`);
    const id = decodeSegment(m[1]!, "session");
    const sub = m[2];
    await authorizeSession(s, id, principal);
    if (sub === undefined) {
      if (method === "GET") return sendJson(res, 200, await s.view(id));
      if (method === "DELETE") return sendJson(res, 200, await s.delete(id));
      throw methodNotAllowed(method, path);
    }
    if (sub === "messages" && method === "POST") {
      await s.check(id);
      const key = idempotencyKey(req);
      const body = await readValid<SendMessageRequest>(req, "SendMessageRequest");
      const admitted = await s.send(id, body.text, key, deps.telemetry?.requestSpan(req));
      // A message this node could not write because it lost the session's lease meanwhile rejects
      // with LeaseLostError, answered 503 (send it again) by sendError, as on every route.
      await admitted.committed;
      const headers = admitted.replayed ? REPLAYED : undefined;
      const started: SendMessageResponse = { activation: admitted.activation, sequence: admitted.sequence, status: "started" };
      if (!body.wait) return sendJson(res, 202, started, headers);
      const end = await boundedEnd(admitted, res, deps.maxWaitMs);
      // The wait bound passed (or the client left): the turn goes on; the client asks again with its key.
      if (end === undefined) return sendJson(res, 202, started, headers);
      const r: SendMessageResponse = { activation: admitted.activation, sequence: admitted.sequence, status: end.status };
      if (end.text !== undefined) r.text = end.text;
      if (end.error !== undefined) r.error = deps.redactor?.redact(end.error) ?? end.error;
      return sendJson(res, 200, r, headers);
    }
    if (sub === "cancel" && method === "POST") {
      await s.check(id);
      const body = await readValid<CancelRequest>(req, "CancelRequest");
      return sendJson(res, 200, await s.cancel(id, body.callId));
    }
    if (sub === "events" && method === "GET") {
      const follow = (req.headers.accept ?? "").includes("text/event-stream");
      // Refused before the session is read or paged in: a key at its streams limit costs nothing more.
      if (follow) deps.tenants.stream(ownerOf(principal), deps.streams.count(ownerOf(principal)));
      const state = await s.journal(id, { expand: parseExpand(url.searchParams.getAll("expand")), follow });
      const after = parseAfter(url.searchParams.get("after") ?? req.headers["last-event-id"]?.toString());
      if (follow) {
        // Again: streams opened while the session was read count too (this check and the add are one tick).
        deps.tenants.stream(ownerOf(principal), deps.streams.count(ownerOf(principal)));
        // Last-Event-ID (a reconnecting EventSource) wins over ?after.
        const resume = req.headers["last-event-id"] !== undefined ? parseAfter(req.headers["last-event-id"].toString()) : after;
        const end = streamEvents(res, state, resume, { maxMs: deps.maxStreamMs });
        // Under the key that opened it (the cookie of /ui included: its bridge filled in the key).
        res.on("close", deps.streams.add(ownerOf(principal), end));
        return;
      }
      const limit = parseLimit(url.searchParams.get("limit"));
      const body: EventsResponse = { records: await state.after(after, limit === undefined ? undefined : after + limit), lastSequence: state.lastSequence };
      return sendJson(res, 200, body);
    }
    throw methodNotAllowed(method, path);
  } catch (e) {
    sendError(res, e, deps.redactor);
  }
}

/**
 * The request's `Idempotency-Key` header: 1 to 255 visible ASCII characters (0x21-0x7E), else 400.
 * Node joins a repeated header with ", ", which the rule refuses too.
 */
function idempotencyKey(req: IncomingMessage): string | undefined {
  const raw = req.headers["idempotency-key"];
  if (raw === undefined) return undefined;
  const key = Array.isArray(raw) ? raw.join(", ") : raw;
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw new BrainRuntimeError("invalid_request", `Idempotency-Key must be 1 to 255 visible ASCII characters (no spaces, one header), got ${JSON.stringify(key.length > 300 ? `${key.slice(0, 300)}…` : key)}`);
  }
  return key;
}

/** The turn's end, or undefined after `maxWaitMs` or once the client is gone (the wait stops listening then). */
async function boundedEnd(admitted: MessageAdmission, res: ServerResponse, maxWaitMs: number): Promise<TurnEnd | undefined> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), maxWaitMs);
  const gone = () => stop.abort();
  res.once("close", gone);
  try {
    return await admitted.end(stop.signal);
  } finally {
    clearTimeout(timer);
    res.off("close", gone);
  }
}

/** POST /v1/keys, GET /v1/keys, PATCH and DELETE /v1/keys/:id: the operator token only (an API key gets 403). */
async function keysRoute(req: IncomingMessage, res: ServerResponse, method: string, path: string, principal: Principal, deps: RouteDeps): Promise<void> {
  if (principal.kind !== "operator") throw new BrainRuntimeError("forbidden", "only the operator token administers API keys");
  if (path === "/v1/keys") {
    if (method === "POST") {
      const body = await readValid<CreateKeyRequest>(req, "CreateKeyRequest");
      const created: CreatedApiKey = deps.keys.create(body.name);
      await deps.keys.saved();
      return sendJson(res, 201, created);
    }
    if (method === "GET") {
      const list: KeyList = { keys: deps.keys.list() };
      return sendJson(res, 200, list);
    }
    throw methodNotAllowed(method, path);
  }
  const m = /^\/v1\/keys\/([0-9a-f]{12})$/.exec(path);
  if (m && method === "PATCH") {
    const body = await readValid<UpdateKeyRequest>(req, "UpdateKeyRequest");
    const changed = deps.keys.setLimits(m[1]!, body.limits);
    await deps.keys.saved();
    return sendJson(res, 200, changed);
  }
  if (!m || method !== "DELETE") throw new BrainRuntimeError("not_found", `no route ${method} ${path}`);
  // Its streams and hosts here end inside revoke() (KeyRing.onRevoked); other nodes' at their next credentials refresh.
  const revoked = deps.keys.revoke(m[1]!);
  await deps.keys.saved();
  return sendJson(res, 200, revoked);
}

/** The `:sequence` of an approval route: the call's tool.call_started sequence, a positive integer. */
function callSequence(raw: string): number {
  const n = Number(raw);
  if (!/^[1-9][0-9]{0,15}$/.test(raw) || !Number.isSafeInteger(n)) throw new BrainRuntimeError("invalid_request", `the call's sequence must be a positive integer (the number after the colon in its callId), got ${JSON.stringify(raw.length > 80 ? `${raw.slice(0, 80)}…` : raw)}`);
  return n;
}

function parseAfter(raw: string | undefined): number {
  if (raw === undefined || raw === "") return 0;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new BrainRuntimeError("invalid_request", `after must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return n;
}

/** `?limit=N` of a page of events: 1 to 1000 records at most; absent, every record after `after`. */
function parseLimit(raw: string | null): number | undefined {
  if (raw === null) return undefined;
  const n = Number(raw);
  if (raw === "" || !Number.isInteger(n) || n < 1 || n > 1000) throw new BrainRuntimeError("invalid_request", `limit must be an integer from 1 to 1000, got ${JSON.stringify(raw.length > 80 ? `${raw.slice(0, 80)}…` : raw)}`);
  return n;
}

/** `expand=requests` (the only expansion): Agentloop model.request records come with their request rebuilt. */
function parseExpand(values: string[]): boolean {
  for (const v of values) {
    for (const part of v.split(",")) {
      if (part !== "requests") throw new BrainRuntimeError("invalid_request", `expand must be "requests", got ${JSON.stringify(part)}`);
    }
  }
  return values.length > 0;
}

function methodNotAllowed(method: string, path: string): BrainRuntimeError {
  return new BrainRuntimeError("not_found", `no route ${method} ${path}`);
}
