import type { ProviderErrorDetails } from "@aexhq/brain-protocol";
import { ModelCallError } from "./provider.ts";

/**
 * A model provider's failure as the contract's `provider_error`: which provider, why, the upstream
 * status. It is never `internal`, which means a bug in Brain: a wrong key, a rate limit or an
 * unreachable endpoint is the operator's or the provider's business, and the client must be able
 * to tell them apart (a 401 will not heal by retrying, a 429 will).
 */
export function providerError(details: ProviderErrorDetails, message: string, retryable: boolean, cause?: unknown): ModelCallError {
  return new ModelCallError("provider_error", message, details, retryable, cause === undefined ? undefined : { cause });
}

/** The reason and retryability of a provider's non-2xx HTTP status. */
export function statusReason(status: number): { reason: ProviderErrorDetails["reason"]; retryable: boolean } {
  if (status === 401 || status === 403) return { reason: "unauthorized", retryable: false };
  if (status === 429) return { reason: "rate_limited", retryable: true };
  if (status >= 500) return { reason: "unavailable", retryable: true };
  return { reason: "rejected", retryable: false };
}
