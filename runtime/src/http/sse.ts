import type { ServerResponse } from "node:http";
import type { JournalRecord } from "@aexhq/brain-protocol";
import type { SessionJournal } from "../sessions/journal-readers.ts";

/** Records read and written at a time while a stream catches up with its backlog. */
const BACKLOG_SLICE = 256;

/** How long one SSE stream lasts at most (BRAIN_MAX_STREAM_MS); the client resumes with Last-Event-ID. */
export const DEFAULT_MAX_STREAM_MS = 600_000;
/** The longest a timer waits (2^31 - 1 ms, about 24.8 days); a longer bound would fire at once. */
export const MAX_STREAM_MS = 2_147_483_647;

/** Ends a stream; `why` goes to the client as an SSE comment line just before the end. */
export type EndStream = (why?: string) => void;

/**
 * Streams committed records with sequence > `after` as SSE (id = sequence, data = record JSON),
 * then every later commit, until the client goes away, the session is deleted or `maxMs` have
 * passed (the client then resumes from its Last-Event-ID; an EventSource does so by itself).
 * Returns a function that ends the stream (its key revoked, server shutdown).
 */
export function streamEvents(res: ServerResponse, session: SessionJournal, after: number, opts: { maxMs?: number } = {}): EndStream {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive" });
  res.write(": brain journal stream\n\n");
  let last = after;
  let ended = false;
  const write = (r: JournalRecord) => {
    if (ended || r.sequence <= last) return;
    last = r.sequence;
    res.write(`id: ${r.sequence}\ndata: ${JSON.stringify(r)}\n\n`);
    if (r.type === "session.deleted") end();
  };
  // The backlog goes out in slices read one at a time, so the first records leave at once and a
  // long journal neither holds the event loop nor sits in memory whole. Commits that arrive
  // meanwhile are read with the last slice; those committed while it is read wait here (write
  // skips what was already written).
  let caughtUp = false;
  let arrived: JournalRecord[] = [];
  const unsubscribe = session.onCommit((r) => (caughtUp ? write(r) : arrived.push(r)));
  const heartbeat = setInterval(() => res.write(": keep-alive\n\n"), 15000);
  heartbeat.unref();
  const maxMs = opts.maxMs ?? DEFAULT_MAX_STREAM_MS;
  const expiry = setTimeout(() => end(`this stream lasts at most ${maxMs} ms; resume after the last id (Last-Event-ID)`), maxMs);
  expiry.unref();
  const end: EndStream = (why) => {
    if (ended) return;
    ended = true;
    unsubscribe();
    clearInterval(heartbeat);
    clearTimeout(expiry);
    if (why !== undefined && !res.writableEnded && !res.destroyed) res.write(`: ${why.replace(/[\r\n]+/g, " ")}\n\n`);
    res.end();
  };
  res.on("close", () => end());
  const backlog = session.lastSequence;
  const slice = async () => {
    if (ended) return;
    if (last + BACKLOG_SLICE < backlog) {
      // Arrived meanwhile and older than what is left of the backlog: read again with it.
      arrived = [];
      const records = await session.after(last, last + BACKLOG_SLICE);
      for (const r of records) write(r);
      if (records.length > 0) return void setImmediate(read);
    }
    for (const r of await session.after(last)) write(r);
    for (const r of arrived) write(r);
    arrived = [];
    caughtUp = true;
  };
  // A journal that cannot be read ends the stream, saying so (the client resumes from its last id).
  const read = () => void slice().catch((e: unknown) => end(`the journal could not be read: ${e instanceof Error ? e.message : String(e)}`));
  read();
  // A deleted session's journal is closed: write() ended the stream at its session.deleted.
  return end;
}

/**
 * The open SSE streams, each under the API key that opened it (none: the operator token), so a
 * revoked key's streams end at once and a shutdown ends them all.
 */
export class OpenStreams {
  private byKey = new Map<string | undefined, Set<EndStream>>();

  /** Registers a stream; returns the function that forgets it (call it when the response closes). */
  add(keyId: string | undefined, end: EndStream): () => void {
    let set = this.byKey.get(keyId);
    if (set === undefined) this.byKey.set(keyId, (set = new Set()));
    set.add(end);
    return () => {
      set.delete(end);
      if (set.size === 0 && this.byKey.get(keyId) === set) this.byKey.delete(keyId);
    };
  }

  /** Streams open under the key (undefined: the operator token's). */
  count(keyId: string | undefined): number {
    return this.byKey.get(keyId)?.size ?? 0;
  }

  /** Ends every stream the key opened; returns how many. */
  endKey(keyId: string, why: string): number {
    const set = this.byKey.get(keyId);
    if (set === undefined) return 0;
    this.byKey.delete(keyId);
    for (const end of set) end(why);
    return set.size;
  }

  endAll(why: string): void {
    const all = [...this.byKey.values()];
    this.byKey.clear();
    for (const set of all) for (const end of set) end(why);
  }
}
