import { limitExceeded } from "./key-limits.ts";

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Each API key's request rate on this node: a token bucket holding one second's worth
 * (`requestsPerSecond`), refilled continuously. Per node by decision (docs/decisions.md): a shared
 * counter would put a database round trip on every request of every key.
 */
export class RequestRate {
  private buckets = new Map<string, Bucket>();

  constructor(private now: () => number = () => performance.now()) {}

  /** Takes one request's token for `keyId`, or throws `limit_exceeded` with the wait until the next one. */
  take(keyId: string, perSecond: number): void {
    const now = this.now();
    let b = this.buckets.get(keyId);
    if (b === undefined) this.buckets.set(keyId, (b = { tokens: perSecond, at: now }));
    else {
      b.tokens = Math.min(perSecond, b.tokens + ((now - b.at) * perSecond) / 1000);
      b.at = now;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return;
    }
    const waitMs = Math.max(1, Math.ceil(((1 - b.tokens) * 1000) / perSecond));
    throw limitExceeded("requestsPerSecond", perSecond, perSecond, "request refused", waitMs);
  }

  /** Forgets a key's bucket (a revoked key's). */
  forget(keyId: string): void {
    this.buckets.delete(keyId);
  }
}
