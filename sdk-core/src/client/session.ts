import type { JournalRecord, SendMessageResponse, CancelResponse, EventsResponse, Session as SessionView } from "@aexhq/brain-protocol";
import type { HttpClient } from "./http.ts";
import { ProtocolError } from "../errors.ts";

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
