import type { JournalRecord, SendMessageResponse, CancelResponse, EventsResponse, Session as SessionView } from "@aexhq/brain-protocol";
import type { HttpClient } from "./http.ts";
import { ProtocolError, SdkError } from "../errors.ts";

/** Options of `Session.send`. */
export interface SendOptions {
  /**
   * The message's `Idempotency-Key`: 1 to 255 visible ASCII characters. Default: a new random UUID
   * for each `send()`. The runtime starts one turn per key on a session, however often it is sent;
   * pass your own to make a `send()` you repeat yourself (after your process restarted) the same message.
   */
  idempotencyKey?: string;
  /**
   * How long `send()` goes on retrying failures that may pass (the runtime could not be reached,
   * 503 `unavailable`, any error marked `retryable`), counted from the first failure in a row;
   * then it throws the last one. Default 60000 ms; 0 never retries.
   */
  retryForMs?: number;
}

/** Default of SendOptions.retryForMs. */
export const DEFAULT_SEND_RETRY_MS = 60_000;
/** Backoff between retries of one send(): the first, doubled each time up to the last. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2_000;
const KEY = /^[\x21-\x7e]{1,255}$/;

/** Whether a failed POST of a message may succeed when sent again with the same key. */
function retryable(e: unknown): boolean {
  if (e instanceof SdkError) return e.code === "connection_failed";
  if (e instanceof ProtocolError) return e.retryable === true || (e.status === 503 && e.code === "unavailable");
  return false;
}

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

  /**
   * Sends a user message and resolves with the assistant's answer when the activation's turn
   * completes; rejects with a `ProtocolError` when the turn failed (`interrupted`, retryable: a
   * restart or a takeover cut it short; send again). The message carries an `Idempotency-Key` (one
   * per call, or `opts.idempotencyKey`), and every request of this call reuses it: after the
   * runtime's wait bound (202 `started`) it asks again to keep waiting, and after a retryable
   * failure (no connection, 503 `unavailable`) it sends again with backoff for up to
   * `opts.retryForMs`. The runtime never runs one key twice, so a retry never runs a second turn.
   */
  async send(text: string, opts: SendOptions = {}): Promise<string> {
    if (typeof text !== "string") throw new TypeError("send(text): text must be a string");
    const key = opts.idempotencyKey ?? crypto.randomUUID();
    if (typeof key !== "string" || !KEY.test(key)) throw new TypeError(`send(text, { idempotencyKey }): the key must be 1 to 255 visible ASCII characters (no spaces), got ${JSON.stringify(key)}`);
    const retryFor = opts.retryForMs ?? DEFAULT_SEND_RETRY_MS;
    if (typeof retryFor !== "number" || !(retryFor >= 0)) throw new TypeError(`send(text, { retryForMs }): must be a number of milliseconds ≥ 0, got ${String(retryFor)}`);
    const path = `/v1/sessions/${encodeURIComponent(this.id)}/messages`;
    let failingSince: number | undefined;
    let backoff = RETRY_FIRST_MS;
    for (;;) {
      let res: SendMessageResponse;
      try {
        res = await this.http.request<SendMessageResponse>("POST", path, { text, wait: true }, { headers: { "idempotency-key": key } });
      } catch (e) {
        failingSince ??= Date.now();
        if (!retryable(e) || Date.now() - failingSince + backoff > retryFor) throw e;
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, RETRY_MAX_MS);
        continue;
      }
      failingSince = undefined;
      backoff = RETRY_FIRST_MS;
      // The runtime's wait bound passed with the turn still running: ask again (the same key: the same turn).
      if (res.status === "started") continue;
      if (res.status === "failed") throw new ProtocolError(res.error ?? { code: "internal", message: "the turn failed" });
      return res.text ?? "";
    }
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
