import { BrainRuntimeError } from "../errors.ts";
import type { SessionManager } from "../sessions/manager.ts";
import type { Principal } from "../credentials/keys.ts";
import { maySee, ownerOf } from "../credentials/keys.ts";

/**
 * Who sees which session, in one place: the operator token sees every session, an API key only the
 * sessions it created. To another key a session does not exist, on every route (404, never 403).
 */

/** Throws `not_found` unless `principal` may see the session (read from memory or its head, never its records). */
export async function authorizeSession(sessions: SessionManager, id: string, principal: Principal): Promise<void> {
  const creator = await sessions.creator(id);
  if (creator === undefined || !maySee(principal, creator.owner)) throw new BrainRuntimeError("not_found", `no session ${id}`);
}

/** The owner condition of a listing for `principal`, applied by the store's index (ListQuery.owner): undefined lists every session. */
export function listedOwner(principal: Principal): string | undefined {
  return ownerOf(principal);
}
