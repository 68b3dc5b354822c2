import type { ErrorInfo } from "@aexhq/brain-protocol";

/** HTTP status for each of Brain's own error codes; anything unlisted is a 400. */
const STATUS: Record<string, number> = {
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  host_unavailable: 409,
  body_too_large: 413,
  internal: 500,
  // Several nodes: the session's owner cannot be reached, or the session is changing hands, or this
  // node stopped running it while a request waited; retry (with the same Idempotency-Key).
  unavailable: 503,
  // A turn cut short by a restart, a takeover or a shutdown (turn.failed); retryable.
  interrupted: 503,
};

/** A runtime failure with a stable contract `code`; crosses HTTP as an ErrorBody and the host channel as ErrorInfo. */
export class BrainRuntimeError extends Error {
  readonly code: string;
  readonly details: unknown;
  /** Whether retrying may help (a provider's 429 or 5xx); Brain itself never retries. */
  readonly retryable: boolean | undefined;
  constructor(code: string, message: string, details?: unknown, retryable?: boolean) {
    super(message);
    this.name = "BrainRuntimeError";
    this.code = code;
    this.details = details;
    this.retryable = retryable;
  }
  get status(): number {
    return STATUS[this.code] ?? 400;
  }
  toInfo(): ErrorInfo {
    const info: ErrorInfo = { code: this.code, message: this.message };
    if (this.retryable !== undefined) info.retryable = this.retryable;
    if (this.details !== undefined) info.details = this.details as ErrorInfo["details"];
    return info;
  }
}

/** A host frame (or Environment call) that was not committed; the host gets `rejected` with this error. */
export class CallRejectedError extends BrainRuntimeError {
  constructor(code: string, message: string, details?: unknown, retryable?: boolean) {
    super(code, message, details, retryable);
    this.name = "CallRejectedError";
  }

  static of(info: ErrorInfo): CallRejectedError {
    return new CallRejectedError(info.code, info.message, info.details, info.retryable);
  }
}

/** The ErrorInfo of anything thrown: typed errors keep their code, anything else is `internal`. */
export function toErrorInfo(e: unknown): ErrorInfo {
  if (e instanceof BrainRuntimeError) return e.toInfo();
  return { code: "internal", message: e instanceof Error ? e.message : String(e) };
}
