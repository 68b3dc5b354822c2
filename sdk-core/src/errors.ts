import type { ErrorInfo } from "@aexhq/brain-protocol";

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

/** An error the runtime reported (HTTP error body, error frame, rejected frame, failed turn). */
export class ProtocolError extends BrainError {
  override name = "ProtocolError";
  readonly retryable: boolean | undefined;
  constructor(info: ErrorInfo, readonly status?: number) {
    super(info.code, info.message, info.details);
    this.retryable = info.retryable;
  }
  toJSON(): ErrorInfo {
    return { code: this.code, message: this.message, ...(this.retryable !== undefined ? { retryable: this.retryable } : {}), ...(this.details !== undefined ? { details: this.details } : {}) };
  }
}

/** Local SDK failures: the connection closed, a reattachment mismatch, an unsupported feature. */
export class SdkError extends BrainError {
  override name = "SdkError";
}
