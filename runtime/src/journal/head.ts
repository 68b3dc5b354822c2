import type { JournalRecord } from "@aexhq/brain-protocol";

/**
 * What a store knows of one session without reading its records: kept up to date at every commit
 * from the record types alone, so recovery can find the sessions with open work and a session can
 * page back in without reading its history.
 */
export interface SessionHead {
  sessionId: string;
  /** `at` of its session.created record (sequence 1). */
  createdAt: number;
  lastSequence: number;
  /** message.user records: the last activation number. */
  activations: number;
  /** model.request records: the index the next model call gets (the scripted model's step). */
  modelRequests: number;
  /** tool.call_started without tool.finished. */
  openCalls: number;
  /** model.request without model.response. */
  openModelRequests: number;
  /** A turn.started without its turn.completed / turn.failed. */
  turnOpen: boolean;
  deleted: boolean;
  /** session.created's `owner`: the API key that created it; absent for the operator. */
  owner?: string;
}

export function newHead(sessionId: string): SessionHead {
  return { sessionId, createdAt: 0, lastSequence: 0, activations: 0, modelRequests: 0, openCalls: 0, openModelRequests: 0, turnOpen: false, deleted: false };
}

/**
 * A copy of `head`, field by field (every store's): a spread copy of heads (with and without
 * `owner`) took V8's slow object-clone path, once per session of every PostgreSQL batch.
 */
export function copyHead(head: SessionHead): SessionHead {
  const copy: SessionHead = {
    sessionId: head.sessionId,
    createdAt: head.createdAt,
    lastSequence: head.lastSequence,
    activations: head.activations,
    modelRequests: head.modelRequests,
    openCalls: head.openCalls,
    openModelRequests: head.openModelRequests,
    turnOpen: head.turnOpen,
    deleted: head.deleted,
  };
  if (head.owner !== undefined) copy.owner = head.owner;
  return copy;
}

/**
 * Advances `head` (in place) past one committed record of its session. Only the type matters,
 * except for session.created, whose `at` and `owner` are kept (so replaying a log needs the data of
 * session.created rows only).
 */
export function advanceHead(head: SessionHead, record: Pick<JournalRecord, "sequence" | "at" | "type"> & { data?: unknown }): void {
  head.lastSequence = record.sequence;
  switch (record.type) {
    case "session.created": {
      head.createdAt = record.at;
      const owner = (record.data as { owner?: unknown } | undefined)?.owner;
      if (typeof owner === "string") head.owner = owner;
      break;
    }
    case "message.user":
      head.activations += 1;
      break;
    case "turn.started":
      head.turnOpen = true;
      break;
    case "turn.completed":
    case "turn.failed":
      head.turnOpen = false;
      break;
    case "model.request":
      head.modelRequests += 1;
      head.openModelRequests += 1;
      break;
    case "model.response":
      if (head.openModelRequests > 0) head.openModelRequests -= 1;
      break;
    case "tool.call_started":
      head.openCalls += 1;
      break;
    case "tool.finished":
      if (head.openCalls > 0) head.openCalls -= 1;
      break;
    case "session.deleted":
      head.deleted = true;
      break;
  }
}

/** Whether recovery has to look at the session: open calls, open model requests or a running turn. */
export function hasOpenWork(head: SessionHead): boolean {
  return !head.deleted && (head.openCalls > 0 || head.openModelRequests > 0 || head.turnOpen);
}

/** A session's status as its head says: deleted, running (a turn open) or idle. */
export type HeadStatus = "idle" | "running" | "deleted";

export function headStatus(head: SessionHead): HeadStatus {
  return head.deleted ? "deleted" : head.turnOpen ? "running" : "idle";
}

/**
 * The listing order: newest first (`createdAt` descending), ties by session id descending (code
 * unit order, what PostgreSQL's COLLATE "C" and SQLite's BINARY compare). Negative: `a` is listed first.
 */
export function listingOrder(a: Pick<SessionHead, "createdAt" | "sessionId">, b: Pick<SessionHead, "createdAt" | "sessionId">): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return a.sessionId === b.sessionId ? 0 : a.sessionId < b.sessionId ? 1 : -1;
}
