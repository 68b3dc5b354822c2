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
   * Journal records after `after`; with `follow`, keeps streaming new records (SSE) until `signal` aborts.
   * The Agentloop's `model.request` records name the conversation they sent (`conversation.through`);
   * with `expand: "requests"` they also carry the exact `request`, rebuilt by the runtime.
   */
  async *events(opts: { after?: number; follow?: boolean; signal?: AbortSignal; expand?: "requests" } = {}): AsyncGenerator<JournalRecord> {
    const after = opts.after ?? 0;
    if (opts.expand !== undefined && opts.expand !== "requests") throw new TypeError(`events({ expand }): expand must be "requests", got ${JSON.stringify(opts.expand)}`);
    const path = `/v1/sessions/${encodeURIComponent(this.id)}/events?after=${after}${opts.expand ? "&expand=requests" : ""}`;
    if (!opts.follow) {
      const page = await this.http.request<EventsResponse>("GET", path);
      yield* page.records;
      return;
    }
    const controller = new AbortController();
    opts.signal?.addEventListener("abort", () => controller.abort(), { once: true });
    const body = await this.http.stream(path, controller.signal);
    const reader = body.pipeThrough(new TextDecoderStream() as unknown as { readable: ReadableStream<string>; writable: WritableStream<Uint8Array> }).getReader();
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await reader.read().catch((e) => {
          if (controller.signal.aborted) return { value: undefined, done: true as const };
          throw e;
        });
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
      controller.abort();
      reader.releaseLock();
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
