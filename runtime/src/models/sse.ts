/** One Server-Sent Event: its `event` field (if any) and its data lines joined by "\n". */
export interface SseEvent {
  event?: string;
  data: string;
}

/**
 * Reads a text/event-stream body event by event as it arrives. Chunks may split anywhere (inside
 * a line, inside a UTF-8 character), so bytes are decoded in streaming mode and only complete
 * lines are parsed. An event left unterminated when the body ends is still delivered: some
 * compatible servers omit the blank line after their last event.
 */
export async function* readSse(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncIterable<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let event: string | undefined;
  let data: string[] = [];
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
        // A CR that ends the chunk may be the first half of a CRLF: wait for the next byte.
        if (!done && nl === buffer.length - 1 && buffer[nl] === "\r") break;
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + (buffer.startsWith("\r\n", nl) ? 2 : 1));
        if (line === "") {
          // One network chunk can hold many events: an abort must not let the buffered rest through.
          signal?.throwIfAborted();
          if (data.length > 0) yield event === undefined ? { data: data.join("\n") } : { event, data: data.join("\n") };
          event = undefined;
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const raw = colon < 0 ? "" : line.slice(colon + 1);
        const text = raw.startsWith(" ") ? raw.slice(1) : raw;
        if (field === "data") data.push(text);
        else if (field === "event") event = text;
      }
      if (done) break;
    }
    signal?.throwIfAborted();
    if (data.length > 0) yield event === undefined ? { data: data.join("\n") } : { event, data: data.join("\n") };
  } finally {
    // Stopping early (an abort, a consumer that breaks) must close the HTTP response too.
    await reader.cancel().catch(() => {
      // Harmless: a body that cannot be cancelled is already closed or errored, which is what we want.
    });
  }
}
