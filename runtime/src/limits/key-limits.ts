import type { KeyLimits, LimitExceededDetails, UpdateKeyRequest } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";

export type LimitName = LimitExceededDetails["limit"];

/** Every limit, in the order the CLI and the docs list them. */
export const LIMIT_NAMES: readonly LimitName[] = ["sessions", "callsInFlight", "streams", "requestsPerSecond", "journalBytes"];

/** What HTTP answers in `Retry-After` for a limit that frees up when something ends (not a rate): a polling hint. */
export const COUNT_RETRY_AFTER_MS = 1000;

/** The limits that apply: the key's own value of each, else the server-wide default; absent = unlimited. */
export function effectiveLimits(own: KeyLimits | undefined, defaults: KeyLimits): KeyLimits {
  const out: KeyLimits = {};
  for (const name of LIMIT_NAMES) {
    const value = own?.[name] ?? defaults[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** A key's own limits after a PATCH: a number sets one, `null` removes it, an absent one stays. */
export function patchLimits(own: KeyLimits | undefined, patch: UpdateKeyRequest["limits"]): KeyLimits {
  const out: KeyLimits = { ...own };
  for (const name of LIMIT_NAMES) {
    if (!(name in patch)) continue;
    const value = patch[name];
    if (value === null || value === undefined) delete out[name];
    else out[name] = value;
  }
  return out;
}

/**
 * The typed refusal of a request over one of its key's limits: HTTP 429 with `Retry-After`
 * (http/respond.ts), a `rejected` frame over the host protocol, a tool call's error outcome.
 */
export function limitExceeded(limit: LimitName, max: number, current: number, what: string, retryAfterMs?: number): BrainRuntimeError {
  const details: LimitExceededDetails = { limit, max, current };
  if (retryAfterMs !== undefined) details.retryAfterMs = retryAfterMs;
  return new BrainRuntimeError("limit_exceeded", `${what}: the API key is at its ${limit} limit (${current} of ${max})`, details, true);
}

/** Milliseconds a `limit_exceeded` error asks the client to wait (its `retryAfterMs`, else the polling hint). */
export function retryAfterMs(e: BrainRuntimeError): number {
  const ms = (e.details as Partial<LimitExceededDetails> | undefined)?.retryAfterMs;
  return typeof ms === "number" ? ms : COUNT_RETRY_AFTER_MS;
}
