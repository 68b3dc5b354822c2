import type { Session, SessionList } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";
import type { JournalStore, ListPosition, ListQuery } from "../journal/store.ts";
import { headView } from "../journal/session.ts";
import type { SessionManager } from "../sessions/manager.ts";
import type { Principal } from "../credentials/keys.ts";
import { listedOwner } from "./session-access.ts";

/** GET /v1/sessions without `?limit`. */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;
/** Longest cursor accepted (a position: a time and a session id). */
const MAX_CURSOR_CHARS = 512;

/**
 * GET /v1/sessions: `?limit=1..1000` (default 50), `?status=idle|running|deleted`, `?cursor=<the
 * previous page's next>`; anything else is 400 `invalid_request`. The principal's owner condition
 * goes into the query (the store's index), so a page of a key's sessions reads that key's rows only.
 */
export function listQuery(q: URLSearchParams, principal: Principal): ListQuery {
  const query: ListQuery = { limit: DEFAULT_PAGE_SIZE };
  const owner = listedOwner(principal);
  if (owner !== undefined) query.owner = owner;
  const limit = q.get("limit");
  if (limit !== null) {
    const n = Number(limit);
    if (limit === "" || !Number.isInteger(n) || n < 1 || n > MAX_PAGE_SIZE) throw new BrainRuntimeError("invalid_request", `limit must be an integer from 1 to ${MAX_PAGE_SIZE}, got ${JSON.stringify(limit)}`);
    query.limit = n;
  }
  const cursor = q.get("cursor");
  if (cursor !== null) query.after = decodeCursor(cursor);
  const status = q.get("status");
  if (status !== null) {
    if (status !== "idle" && status !== "running" && status !== "deleted") throw new BrainRuntimeError("invalid_request", `status must be idle, running or deleted, got ${JSON.stringify(status)}`);
    query.status = status;
  }
  return query;
}

/**
 * One page: the store's rows (filtered by owner and state in its index), each shown as it is now: a
 * resident session's view from memory (live status, open calls), another's from its head and its
 * session.created data. A resident session whose live status no longer matches `status` (a turn
 * that began or ended since its last commit) is left out, so a page may hold fewer than `limit`
 * sessions; `next` alone says whether more follow.
 */
export async function listSessions(store: JournalStore, sessions: SessionManager, query: ListQuery): Promise<SessionList> {
  const page = await store.listSessions(query);
  const out: Session[] = [];
  for (const { head, created } of page.sessions) {
    const view = sessions.liveView(head.sessionId) ?? headView(head, created);
    if (query.status === undefined || view.status === query.status) out.push(view);
  }
  return page.next === undefined ? { sessions: out } : { sessions: out, next: encodeCursor(page.next) };
}

/** Every session `principal` may see, a page at a time (what a host's placed sessions are found in). */
export async function* everySession(store: JournalStore, sessions: SessionManager, principal: Principal): AsyncGenerator<Session> {
  const query: ListQuery = { limit: MAX_PAGE_SIZE };
  const owner = listedOwner(principal);
  if (owner !== undefined) query.owner = owner;
  for (;;) {
    const page = await store.listSessions(query);
    for (const { head, created } of page.sessions) yield sessions.liveView(head.sessionId) ?? headView(head, created);
    if (page.next === undefined) return;
    query.after = page.next;
  }
}

/** A position as the opaque cursor clients pass back: base64url of `[createdAt, sessionId]`. */
export function encodeCursor(at: ListPosition): string {
  return Buffer.from(JSON.stringify([at.createdAt, at.sessionId])).toString("base64url");
}

/** The position a cursor names; 400 `invalid_request` for anything `encodeCursor` did not make. */
export function decodeCursor(cursor: string): ListPosition {
  const bad = (cause?: unknown) => new BrainRuntimeError("invalid_request", `cursor ${JSON.stringify(cursor.length > 80 ? `${cursor.slice(0, 80)}…` : cursor)} is not a cursor this server gave (pass a page's \`next\` as it came)`, undefined, undefined, { cause });
  if (cursor === "" || cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch (e) {
    throw bad(e);
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || !Number.isSafeInteger(parsed[0]) || (parsed[0] as number) < 0 || typeof parsed[1] !== "string" || parsed[1] === "") throw bad();
  const at: ListPosition = { createdAt: parsed[0] as number, sessionId: parsed[1] };
  // One spelling per position: a cursor that decodes but re-encodes differently was not ours.
  if (encodeCursor(at) !== cursor) throw bad();
  return at;
}
