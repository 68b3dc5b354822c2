import type { JournalRecord, SendMessageResponse, CancelResponse, EventsResponse, Session as SessionView } from "@aexhq/brain-protocol";
import type { HttpClient } from "./http.ts";
import { ProtocolError } from "../errors.ts";

/** A stream that lasted at least this long reconnects at once, even if it brought no record. */
const RECONNECT_QUICK_MS = 1000;
const RECONNECT_FIRST_PAUSE_MS = 100;
const RECONNECT_MAX_PAUSE_MS = 2000;

/** Waits `ms`; false if `signal` aborted first. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve(ok);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A handle on one durable session. */
export class Session {
  constructor(
    readonly id: string,
    private readonly http: HttpClient,
    private readonly release: () => void,
  ) {}

  /** Sends a user message and resolves with the assistant's answer when the activation's turn completes. */
  async send(text: string): Promise<string> {
    if (typeof text !== "string") throw new TypeError("send(text): text must be a string");
    const res = await this.http.request<SendMessageResponse>("POST", `/v1/sessions/${encodeURIComponent(this.id)}/messages`, { text, wait: true });
    if (res.status === "failed") throw new ProtocolError(res.error ?? { code: "internal", message: "the turn failed" });
    return res.text ?? "";
  }

  /** The session as the runtime sees it now. */
  info(): Promise<SessionView> {
    return this.http.request<SessionView>("GET", `/v1/sessions/${encodeURIComponent(this.id)}`);
  }

  /**
   * Journal records after `after`; with `follow`, keeps streaming new records (SSE) until the
   * session's `session.deleted` record or until `signal` aborts (the iteration then just ends).
   * The runtime ends each stream after a while (BRAIN_MAX_STREAM_MS) and a node may restart: the
   * iteration then opens the next stream after the last record it yielded by itself, so the caller
   * sees every record once, in order, with no gap. A stream that cannot be opened again (the
   * runtime unreachable: `connection_failed`; the key revoked: `unauthorized`) ends it with that error.
   * The Agentloop's `model.request` records name the conversation they sent (`conversation.through`);
   * with `expand: "requests"` they also carry the exact `request`, rebuilt by the runtime.
   */
  async *events(opts: { after?: number; follow?: boolean; signal?: AbortSignal; expand?: "requests" } = {}): AsyncGenerator<JournalRecord> {
    const after = opts.after ?? 0;
    if (opts.expand !== undefined && opts.expand !== "requests") throw new TypeError(`events({ expand }): expand must be "requests", got ${JSON.stringify(opts.expand)}`);
    const path = (n: number) => `/v1/sessions/${encodeURIComponent(this.id)}/events?after=${n}${opts.expand ? "&expand=requests" : ""}`;
    if (!opts.follow) {
      const page = await this.http.request<EventsResponse>("GET", path(after));
      yield* page.records;
      return;
    }
    let last = after;
    // Streams in a row that ended soon without a record: the next opens a little later each time.
    let idle = 0;
    for (;;) {
      const opened = Date.now();
      let yielded = false;
      for await (const r of this.stream(path(last), opts.signal)) {
        if (r.sequence <= last) continue;
        last = r.sequence;
        yielded = true;
        yield r;
        if (r.type === "session.deleted") return;
      }
      if (opts.signal?.aborted) return;
      idle = yielded || Date.now() - opened >= RECONNECT_QUICK_MS ? 0 : idle + 1;
      if (idle > 0 && !(await pause(Math.min(RECONNECT_FIRST_PAUSE_MS * 2 ** (idle - 1), RECONNECT_MAX_PAUSE_MS), opts.signal))) return;
    }
  }

  /** One SSE stream's records, until it ends (by the server, or cut off) or `signal` aborts. */
  private async *stream(path: string, signal: AbortSignal | undefined): AsyncGenerator<JournalRecord> {
    if (signal?.aborted) return;
    const controller = new AbortController();
    const abort = () => controller.abort();
    signal?.addEventListener("abort", abort, { once: true });
    let reader: ReadableStreamDefaultReader<string> | undefined;
    try {
      let body: ReadableStream<Uint8Array>;
      try {
        body = await this.http.stream(path, controller.signal);
      } catch (e) {
        if (controller.signal.aborted) return;
        throw e;
      }
      reader = body.pipeThrough(new TextDecoderStream() as unknown as { readable: ReadableStream<string>; writable: WritableStream<Uint8Array> }).getReader();
      let buffer = "";
      for (;;) {
        // A stream cut off midway (a node went away) ends like one the server ended: the caller opens the next.
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true as const }));
        if (done) return;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = event.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
          if (data) yield JSON.parse(data) as JournalRecord;
        }
      }
    } finally {
      signal?.removeEventListener("abort", abort);
      controller.abort();
      reader?.releaseLock();
    }
  }

  /** Cancels one open tool call, or without `callId` the running activation. Resolves with the cancelled call ids. */
  async cancel(opts: { callId?: string } = {}): Promise<string[]> {
    const res = await this.http.request<CancelResponse>("POST", `/v1/sessions/${encodeURIComponent(this.id)}/cancel`, opts.callId ? { callId: opts.callId } : {});
    return res.cancelled;
  }

  /** Deletes the session and releases its handlers. */
  async delete(): Promise<void> {
    try {
      await this.http.request("DELETE", `/v1/sessions/${encodeURIComponent(this.id)}`);
    } finally {
      this.release();
    }
  }
}
