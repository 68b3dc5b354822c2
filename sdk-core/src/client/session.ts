import type { ApprovalRequest, ApprovalResponse, JournalRecord, SendMessageResponse, CancelResponse, EventsResponse, Session as SessionView } from "@aexhq/brain-protocol";
import type { HttpClient } from "./http.ts";
import { ProtocolError, protocolError, SdkError } from "../errors.ts";
import { AnswerReader, describeFailures, failedCalls, isQuiet, mayQuiet, type TurnAnswer } from "./answers.ts";
import { answerOf, checkedRequest, pendingApprovalOf, type ApprovalHandler, type ApprovalHookOptions, type PendingApproval } from "./approvals.ts";

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
  /**
   * Reject when a tool call of this message's turn failed (ended `error`, `timeout`, `cancelled` or
   * `unknown` before the turn answered), even though the model answered: SdkError `tool_failed`,
   * whose `details` hold `{ answer, failures }` (each failure: callId, tool, status, error or
   * message). Default false: the answer is returned and the model saw the failures. Calls still
   * running in the background when the turn answers are not counted (they have not failed yet).
   */
  failOnToolError?: boolean;
}

/** Options of `session.idle()` and `session.next()`. */
export interface WaitOptions {
  /** Stops waiting: the promise rejects with the signal's reason (e.g. `AbortSignal.timeout(ms)`). */
  signal?: AbortSignal;
}

/** Default of SendOptions.retryForMs. */
export const DEFAULT_SEND_RETRY_MS = 60_000;
/** Backoff between retries of one send(): the first, doubled each time up to the last. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2_000;
const KEY = /^[\x21-\x7e]{1,255}$/;

/** Whether a failed POST of a message may succeed when sent again with the same key. */
function retryable(e: unknown): boolean {
  if (e instanceof SdkError) return e.code === "connection_failed" || e.code === "connection_lost";
  if (e instanceof ProtocolError) return e.retryable === true || (e.status === 503 && e.code === "unavailable");
  return false;
}

/**
 * A failure showing that Brain had this send()'s request: a stopping node's 503 `unavailable`, or
 * a connection that closed after the request had been out a while (CUT_OFF_AFTER_MS). A pooled
 * connection the server had closed before the request fails within a round trip: that request
 * never reached Brain, and is not counted.
 */
function wasCutOff(e: unknown): boolean {
  if (e instanceof ProtocolError) return e.code === "unavailable";
  if (!(e instanceof SdkError) || e.code !== "connection_lost") return false;
  const afterMs = (e.details as { afterMs?: number } | undefined)?.afterMs;
  return afterMs === undefined || afterMs >= CUT_OFF_AFTER_MS;
}
const CUT_OFF_AFTER_MS = 250;

/**
 * The error a send() ends with. When Brain had the request and the connection was then lost (the
 * server stopped), later attempts that cannot reach it fail `connection_failed`; thrown as is, that
 * would read as if Brain had never been reached, so it is reported as the loss it is.
 */
function lostWhileWaiting(last: unknown, cutOff: Error | undefined, failingForMs: number): unknown {
  if (cutOff === undefined || !(last instanceof SdkError) || last.code !== "connection_failed") return last;
  const e = new SdkError("connection_lost", `send(): the connection to Brain was lost while the message's turn ran (${cutOff.message}), and Brain could not be reached again for ${failingForMs} ms (${last.message}); send again with the same idempotencyKey to learn the turn's outcome without running it twice`);
  (e as { cause?: unknown }).cause = cutOff;
  return e;
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
export class Session implements AsyncIterable<TurnAnswer> {
  /**
   * The handle's position among the session's answers: the journal sequence through which
   * `idle()`, `next()` and iteration have handed answers out. A new handle starts at the session's
   * beginning, so a reattached one sees what happened while it was away.
   */
  private position = 0;
  /** idle() and next() run one after another on a handle, so each answer is handed out once. */
  private waits: Promise<unknown> = Promise.resolve();

  constructor(
    readonly id: string,
    private readonly http: HttpClient,
    private readonly release: () => void,
    /** Aborted by `brain.close()`: the client's approval hooks stop with it. */
    private readonly closing?: AbortSignal,
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
    /** The first failure of this send() that shows Brain had the request (lost mid-way, 503 from a stopping node). */
    let cutOff: Error | undefined;
    for (;;) {
      let res: SendMessageResponse;
      try {
        res = await this.http.request<SendMessageResponse>("POST", path, { text, wait: true }, { headers: { "idempotency-key": key } });
      } catch (e) {
        failingSince ??= Date.now();
        if (cutOff === undefined && wasCutOff(e)) cutOff = e as Error;
        if (!retryable(e) || Date.now() - failingSince + backoff > retryFor) throw lostWhileWaiting(e, cutOff, Date.now() - failingSince);
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, RETRY_MAX_MS);
        continue;
      }
      failingSince = undefined;
      backoff = RETRY_FIRST_MS;
      // The runtime's wait bound passed with the turn still running: ask again (the same key: the same turn).
      if (res.status === "started") continue;
      if (res.status === "failed") throw protocolError(res.error ?? { code: "internal", message: "the turn failed" });
      const answer = res.text ?? "";
      if (opts.failOnToolError === true) await this.checkTools(res, answer);
      return answer;
    }
  }

  /** failOnToolError: the calls of this message's turn that failed before it answered reject the send. */
  private async checkTools(res: SendMessageResponse, answer: string): Promise<void> {
    const page = await this.http.request<EventsResponse>("GET", `/v1/sessions/${encodeURIComponent(this.id)}/events?after=${res.sequence}`);
    const { failures } = failedCalls(page.records, res.activation);
    if (failures.length === 0) return;
    throw new SdkError("tool_failed", `the turn answered, but ${failures.length === 1 ? "a tool call" : `${failures.length} tool calls`} of it failed: ${describeFailures(failures)}`, { answer, failures });
  }

  /**
   * Waits until nothing runs in the session and nothing is about to: no turn open or due (a wake
   * turn a background tool's result causes included) and no tool call open, then resolves with the
   * answers of every turn since this handle's last `idle()` (or since the handle was made: a new
   * handle starts at the session's beginning), the answer `send()` returned included, in order.
   * Built on GET /v1/sessions/:id (status and open calls) and the followed event stream. Answers
   * handed out here are not handed out again by `next()` or iteration. A deleted session is idle.
   * `signal` stops the wait (rejects with its reason).
   */
  idle(opts: WaitOptions = {}): Promise<TurnAnswer[]> {
    return this.serially(async () => {
      const signal = opts.signal;
      let view = await this.view(signal);
      if (!isQuiet(view)) {
        for await (const r of this.events({ after: view.lastSequence, follow: true, ...(signal ? { signal } : {}) })) {
          if (!mayQuiet(r)) continue;
          view = await this.view(signal);
          if (isQuiet(view)) break;
        }
        signal?.throwIfAborted();
        if (!isQuiet(view)) view = await this.view(signal); // the stream ended at session.deleted
      }
      const page = await this.http.request<EventsResponse>("GET", `/v1/sessions/${encodeURIComponent(this.id)}/events?after=${this.position}`, undefined, signal ? { signal } : undefined);
      const reader = new AnswerReader();
      const answers = page.records.flatMap((r) => (r.sequence <= view.lastSequence ? [reader.read(r)].filter((a) => a !== undefined) : []));
      this.position = Math.max(this.position, view.lastSequence);
      return answers;
    });
  }

  /**
   * The next answer after this handle's position (see idle()): an answer already in the journal at
   * once, else the next turn that ends, a wake turn included. Rejects SdkError `session_deleted`
   * when the session is deleted first; `signal` stops the wait (rejects with its reason).
   */
  next(opts: WaitOptions = {}): Promise<TurnAnswer> {
    return this.serially(async () => {
      const signal = opts.signal;
      const reader = new AnswerReader();
      for await (const r of this.events({ after: this.position, follow: true, ...(signal ? { signal } : {}) })) {
        const answer = reader.read(r);
        if (answer === undefined) continue;
        this.position = answer.sequence;
        return answer;
      }
      signal?.throwIfAborted();
      throw new SdkError("session_deleted", `session ${this.id} was deleted: no answer will follow`);
    });
  }

  /**
   * Every answer after this handle's position, as turns end, wake turns included:
   * `for await (const answer of session) …`. Ends when the session is deleted (or `signal` aborts).
   */
  async *answers(opts: WaitOptions = {}): AsyncGenerator<TurnAnswer> {
    for (;;) {
      try {
        yield await this.next(opts);
      } catch (e) {
        if ((e instanceof SdkError && e.code === "session_deleted") || opts.signal?.aborted) return;
        throw e;
      }
    }
  }

  [Symbol.asyncIterator](): AsyncGenerator<TurnAnswer> {
    return this.answers();
  }

  private serially<T>(step: () => Promise<T>): Promise<T> {
    const run = this.waits.then(step, step);
    this.waits = run.catch(() => undefined);
    return run;
  }

  private view(signal: AbortSignal | undefined): Promise<SessionView> {
    return this.http.request<SessionView>("GET", `/v1/sessions/${encodeURIComponent(this.id)}`, undefined, signal ? { signal } : undefined);
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

  /**
   * The calls of this session that await a person's approval now (the view's `pendingApprovals`,
   * each read from its `tool.call_started`), oldest first.
   */
  async pendingApprovals(opts: WaitOptions = {}): Promise<PendingApproval[]> {
    const view = await this.view(opts.signal);
    return this.approvalsOf(view, opts.signal);
  }

  private async approvalsOf(view: SessionView, signal: AbortSignal | undefined): Promise<PendingApproval[]> {
    const out: PendingApproval[] = [];
    for (const callId of view.pendingApprovals ?? []) {
      const sequence = Number(callId.slice(callId.lastIndexOf(":") + 1));
      const page = await this.http.request<EventsResponse>("GET", `/v1/sessions/${encodeURIComponent(this.id)}/events?after=${sequence - 1}`, undefined, signal ? { signal } : undefined);
      const started = page.records[0];
      if (started?.type !== "tool.call_started" || started.data.callId !== callId) continue;
      const pending = await pendingApprovalOf(this.id, started);
      if (pending !== undefined) out.push(pending);
    }
    return out.sort((a, b) => a.sequence - b.sequence);
  }

  /**
   * Approves a call that awaits approval: Brain journals the decision (with this client's key as who
   * decided, and the digest of the input in `request`), then dispatches the call once. Rejects with
   * a ProtocolError `conflict` when the call awaits no decision any more (decided already: `details`
   * say by whom; or it ended: timed out, cancelled), `digest_mismatch` when `request` is not the
   * call's input.
   */
  async approve(request: PendingApproval, opts: { reason?: string } = {}): Promise<ApprovalResponse> {
    if (opts.reason !== undefined && typeof opts.reason !== "string") throw new TypeError(`session.approve(request, { reason }): reason must be a string, got ${typeof opts.reason}`);
    return await this.decide(checkedRequest(request, "session.approve(request)"), "approve", opts.reason);
  }

  /**
   * Denies a call that awaits approval: it ends `error` `approval_denied` without being dispatched,
   * and the model reads who denied it and `reason`. Rejects as `approve` does.
   */
  async deny(request: PendingApproval, reason?: string): Promise<ApprovalResponse> {
    if (reason !== undefined && typeof reason !== "string") throw new TypeError(`session.deny(request, reason): reason must be a string, got ${typeof reason}`);
    return await this.decide(checkedRequest(request, "session.deny(request, reason)"), "deny", reason);
  }

  private async decide(request: PendingApproval, decision: "approve" | "deny", reason: string | undefined): Promise<ApprovalResponse> {
    if (request.sessionId !== this.id) throw new TypeError(`call ${request.callId} is a call of session ${request.sessionId}, not of ${this.id}`);
    const body: ApprovalRequest = { decision, inputDigest: request.inputDigest, ...(reason !== undefined ? { reason } : {}) };
    return await this.http.request<ApprovalResponse>("POST", `/v1/sessions/${encodeURIComponent(this.id)}/calls/${request.sequence}/approval`, body);
  }

  /**
   * Calls `handler` once for every call of this session that awaits approval: those waiting now, and
   * each new one as it is journaled (the session's event stream), until the returned function is
   * called, `opts.signal` aborts, the session is deleted or the client is closed. The handler's
   * answer is journaled as this client's decision (`"approve"`, `"deny"`, `{ decision, reason }`); an
   * answer of nothing leaves the call waiting for someone else or for its deadline. A decision made
   * elsewhere first is not an error (the hook's is refused `conflict` and dropped).
   */
  onApprovalRequest(handler: ApprovalHandler, opts: ApprovalHookOptions = {}): () => void {
    if (typeof handler !== "function") throw new TypeError("session.onApprovalRequest(handler): handler must be a function");
    const stop = new AbortController();
    const abort = () => stop.abort();
    for (const s of [opts.signal, this.closing]) {
      if (s?.aborted) stop.abort();
      else s?.addEventListener("abort", abort, { once: true });
    }
    const report = opts.onError ?? ((e: unknown, r?: PendingApproval) => console.error(`brain: onApprovalRequest${r ? ` (call ${r.callId})` : ""}: ${e instanceof Error ? e.message : String(e)}`));
    const ask = async (request: PendingApproval) => {
      try {
        const answer = answerOf(await handler(request));
        if (answer === undefined || stop.signal.aborted) return;
        await this.decide(request, answer.decision, answer.reason);
      } catch (e) {
        if (e instanceof ProtocolError && e.code === "conflict") return; // decided elsewhere first, or the call ended
        report(e, request);
      }
    };
    void (async () => {
      const view = await this.view(stop.signal);
      // Those waiting now, then every new one: the stream starts where the view was read.
      for (const request of await this.approvalsOf(view, stop.signal)) void ask(request);
      for await (const r of this.events({ after: view.lastSequence, follow: true, signal: stop.signal })) {
        if (r.type !== "tool.call_started" || r.data.approval === undefined) continue;
        const request = await pendingApprovalOf(this.id, r).catch((e: unknown) => void report(e));
        if (request !== undefined) void ask(request);
      }
    })().catch((e: unknown) => {
      if (!stop.signal.aborted) report(e);
    }).finally(() => {
      opts.signal?.removeEventListener("abort", abort);
      this.closing?.removeEventListener("abort", abort);
    });
    return abort;
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
