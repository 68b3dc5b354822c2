import type { ServerResponse } from "node:http";
import type { JournalRecord } from "@aexhq/brain-protocol";
import type { SessionJournal } from "../sessions/journal-readers.ts";

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
  const unsubscribe = session.onCommit(write);
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
  for (const r of session.after(after)) write(r);
  // A deleted session's journal is closed: write() ended the stream at its session.deleted.
  return end;
}
