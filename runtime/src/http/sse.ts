import type { ServerResponse } from "node:http";
import type { JournalRecord } from "@aexhq/brain-protocol";
import type { SessionJournal } from "../sessions/journal-readers.ts";

/** Records read and written at a time while a stream catches up with its backlog. */
const BACKLOG_SLICE = 256;

/**
 * Streams committed records with sequence > `after` as SSE (id = sequence, data = record JSON),
 * then every later commit, until the client goes away or the session is deleted.
 * Returns a function that ends the stream (server shutdown).
 */
export function streamEvents(res: ServerResponse, session: SessionJournal, after: number): () => void {
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
  // long journal neither holds the event loop nor sits in memory whole; commits that arrive
  // meanwhile are read with the last slice.
  let caughtUp = false;
  const unsubscribe = session.onCommit((r) => caughtUp && write(r));
  const heartbeat = setInterval(() => res.write(": keep-alive\n\n"), 15000);
  heartbeat.unref();
  const end = () => {
    if (ended) return;
    ended = true;
    unsubscribe();
    clearInterval(heartbeat);
    res.end();
  };
  res.on("close", end);
  const backlog = session.lastSequence;
  const slice = () => {
    if (ended) return;
    if (last + BACKLOG_SLICE < backlog) {
      const records = session.after(last, last + BACKLOG_SLICE);
      for (const r of records) write(r);
      if (records.length > 0) return void setImmediate(slice);
    }
    for (const r of session.after(last)) write(r);
    caughtUp = true;
  };
  slice();
  // A deleted session's journal is closed: write() ended the stream at its session.deleted.
  return end;
}
