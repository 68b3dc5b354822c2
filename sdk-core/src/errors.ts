import type { ErrorInfo, LimitExceededDetails } from "@aexhq/brain-protocol";

/**
 * Every error the SDK raises. `code` is stable: either a protocol code from the contract
 * (`ProtocolError`, it crossed the wire) or a local SDK code (never sent).
 */
export class BrainError extends Error {
  override name = "BrainError";
  constructor(readonly code: string, message: string, readonly details?: unknown) {
    super(message);
  }
}

/**
 * An error the runtime reported (HTTP error body, error frame, rejected frame, failed turn). `code`
 * is one of the contract's ErrorCode values or a tool's own; `retryable: true` says trying again may
 * help. Two a client meets when a runtime restarts or a node of several goes away:
 * - `interrupted` (retryable): the turn was cut short by a restart of the runtime, a takeover of the
 *   session by another node or a shutdown, and is not resumed; `session.send()` rejects with it, and
 *   sending the message again (a new `send()`) runs a new turn.
 * - `unavailable` (HTTP 503, retryable): the node could not serve the request now; `session.send()`
 *   retries it by itself with the same idempotency key, and throws it once `retryForMs` has passed.
 */
export class ProtocolError extends BrainError {
  override name = "ProtocolError";
  readonly retryable: boolean | undefined;
  /** On a host-channel refusal: the call it is about is over (ErrorInfo.final). */
  readonly final: boolean | undefined;
  constructor(info: ErrorInfo, readonly status?: number) {
    super(info.code, info.message, info.details);
    this.retryable = info.retryable;
    this.final = info.final;
  }
  toJSON(): ErrorInfo {
    return {
      code: this.code, message: this.message,
      ...(this.retryable !== undefined ? { retryable: this.retryable } : {}),
      ...(this.final !== undefined ? { final: this.final } : {}),
      ...(this.details !== undefined ? { details: this.details } : {}),
    };
  }
}

/**
 * `limit_exceeded`: the API key the SDK speaks with is at one of the limits the operator set for it
 * (HTTP 429; a `rejected` answer to an `emit` over the session's journal-bytes limit). `limit` says
 * which (sessions, callsInFlight, streams, requestsPerSecond, journalBytes), `max` its value,
 * `current` the key's use; `retryAfterMs` when to try again (the request rate's wait, else the
 * server's Retry-After). A tool call refused over callsInFlight is no exception: its outcome is
 * error/`limit_exceeded` and the model sees it.
 */
export class LimitExceededError extends ProtocolError {
  override name = "LimitExceededError";
  readonly limit: LimitExceededDetails["limit"];
  readonly max: number;
  readonly current: number;
  readonly retryAfterMs: number | undefined;
  constructor(info: ErrorInfo, status?: number, retryAfterMs?: number) {
    super(info, status);
    const details = (info.details ?? {}) as Partial<LimitExceededDetails>;
    this.limit = details.limit ?? "requestsPerSecond";
    this.max = details.max ?? 0;
    this.current = details.current ?? 0;
    this.retryAfterMs = details.retryAfterMs ?? retryAfterMs;
  }
}

/**
 * The error a runtime's ErrorInfo describes: a LimitExceededError for `limit_exceeded`, else a
 * ProtocolError. `retryAfter` is an HTTP answer's Retry-After header (seconds), if any.
 */
export function protocolError(info: ErrorInfo, status?: number, retryAfter?: string | null): ProtocolError {
  if (info.code !== "limit_exceeded") return new ProtocolError(info, status);
  const seconds = retryAfter == null ? NaN : Number(retryAfter);
  return new LimitExceededError(info, status, Number.isFinite(seconds) ? seconds * 1000 : undefined);
}

/** Local SDK failures: the connection closed, a reattachment mismatch, an unsupported feature. */
export class SdkError extends BrainError {
  override name = "SdkError";
}
