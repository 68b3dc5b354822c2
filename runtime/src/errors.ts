import { ERROR_CODES } from "@aexhq/brain-protocol";
import type { ErrorCode, ErrorInfo } from "@aexhq/brain-protocol";

/** An ErrorInfo whose code is one of Brain's own (what the runtime's parts report to each other). */
export type RuntimeErrorInfo = Omit<ErrorInfo, "code"> & { code: ErrorCode };

const CODES: ReadonlySet<string> = new Set(ERROR_CODES);

/** Whether `code` is one of the contract's ErrorCode values. */
export function isErrorCode(code: string): code is ErrorCode {
  return CODES.has(code);
}

/** HTTP status for each of Brain's own error codes; anything unlisted is a 400. */
const STATUS: Record<string, number> = {
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  host_unavailable: 409,
  body_too_large: 413,
  // An API key at one of its tenant limits (limits/): answered with Retry-After (http/respond.ts).
  limit_exceeded: 429,
  internal: 500,
  // The session's model provider failed (its key, its load, its reply): a bad gateway, never a bug here.
  provider_error: 502,
  // Several nodes: the session's owner cannot be reached, or the session is changing hands, or this
  // node stopped running it while a request waited; retry (with the same Idempotency-Key).
  unavailable: 503,
  // A turn cut short by a restart, a takeover or a shutdown (turn.failed); retryable.
  interrupted: 503,
};

/**
 * A runtime failure with a stable contract `code` (one of the contract's ErrorCode values); crosses
 * HTTP as an ErrorBody and the host channel as ErrorInfo. `cause` keeps what it was made from (a
 * driver's error, a failed write), for logs and debugging; it never crosses the wire.
 */
export class BrainRuntimeError extends Error {
  readonly code: ErrorCode;
  readonly details: unknown;
  /** Whether retrying may help (a provider's 429 or 5xx); Brain itself never retries. */
  readonly retryable: boolean | undefined;
  /** A refusal about a call that means the call is over (ErrorInfo.final: a lost lease's `conflict`). */
  readonly final: boolean | undefined;
  constructor(code: ErrorCode, message: string, details?: unknown, retryable?: boolean, options?: { cause?: unknown; final?: boolean }) {
    super(message, options);
    this.name = "BrainRuntimeError";
    this.code = code;
    this.details = details;
    this.retryable = retryable;
    this.final = options?.final;
  }
  /**
   * The error an ErrorInfo from elsewhere describes (an Environment's refusal, a peer node's answer).
   * A code the contract does not list is a bug where it was made: it becomes `internal`, naming it.
   */
  static of(info: ErrorInfo | RuntimeErrorInfo, cause?: unknown): BrainRuntimeError {
    if (isErrorCode(info.code)) return new BrainRuntimeError(info.code, info.message, info.details, info.retryable, { cause, final: info.final });
    return new BrainRuntimeError("internal", `${info.message} (code ${JSON.stringify(info.code)} is not one of Brain's error codes)`, info.details, info.retryable, { cause });
  }

  get status(): number {
    return STATUS[this.code] ?? 400;
  }
  toInfo(): ErrorInfo {
    const info: ErrorInfo = { code: this.code, message: this.message };
    if (this.retryable !== undefined) info.retryable = this.retryable;
    if (this.final === true) info.final = true;
    if (this.details !== undefined) info.details = this.details as ErrorInfo["details"];
    return info;
  }
}

/**
 * A record refused because this node no longer holds its session's lease (journal/postgres.ts: a
 * takeover, or this node's own lease ran out): nothing of it was written. A host hears it as a final
 * `conflict` about its call (the call is over here); an HTTP request as 503 `unavailable`, retryable
 * (http/respond.ts), because sending it again reaches the session's owner and nothing was written.
 */
export class LeaseLostError extends BrainRuntimeError {
  readonly sessionId: string;
  constructor(sessionId: string) {
    super("conflict", `session ${sessionId}: this node no longer holds its lease (taken over, or this node's lease expired); the record was not written`, { sessionId }, undefined, { final: true });
    this.name = "LeaseLostError";
    this.sessionId = sessionId;
  }
}

/** A host frame (or Environment call) that was not committed; the host gets `rejected` with this error. */
export class CallRejectedError extends BrainRuntimeError {
  constructor(code: ErrorCode, message: string, details?: unknown, retryable?: boolean, options?: { cause?: unknown; final?: boolean }) {
    super(code, message, details, retryable, options);
    this.name = "CallRejectedError";
  }

  static override of(info: ErrorInfo | RuntimeErrorInfo, cause?: unknown): CallRejectedError {
    const e = BrainRuntimeError.of(info, cause);
    return new CallRejectedError(e.code, e.message, e.details, e.retryable, { cause, final: e.final });
  }
}

/** The ErrorInfo of anything thrown: typed errors keep their code, anything else is `internal`. */
export function toErrorInfo(e: unknown): ErrorInfo {
  if (e instanceof BrainRuntimeError) return e.toInfo();
  return { code: "internal", message: e instanceof Error ? e.message : String(e) };
}
