import { ModelCallError } from "./provider.ts";
import { providerError, statusReason } from "./provider-error.ts";
import { checkJsonTextDepth } from "../json-limits.ts";

/**
 * A provider's non-2xx answer as a `provider_error` with its status, reason and retryability (429
 * and 5xx are worth retrying, by the caller: Brain never retries), quoting the provider's own error
 * message and type when it sent JSON.
 */
export async function httpFailure(provider: string, res: Response): Promise<ModelCallError> {
  const text = await res.text().catch(() => "");
  let message = text.slice(0, 200);
  let type: string | undefined;
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown; type?: unknown; code?: unknown } | string; message?: unknown };
    const m = typeof body.error === "string" ? body.error : (body.error?.message ?? body.message);
    if (typeof m === "string") message = m;
    // OpenAI puts the precise reason in `code` (invalid_api_key) and a class in `type`; Anthropic has `type` only.
    const t = typeof body.error === "object" ? (body.error.code ?? body.error.type) : undefined;
    if (typeof t === "string" && t !== "") type = t;
  } catch {
    // Harmless: a body that is not JSON is quoted as it came (`message` above).
  }
  const { reason, retryable } = statusReason(res.status);
  const details = type === undefined ? { provider, reason, status: res.status } : { provider, reason, status: res.status, type };
  return providerError(details, `${provider} answered HTTP ${res.status}: ${message}`, retryable);
}

/** fetch, with a network failure (not an abort) turned into a `provider_error` `unreachable`. */
export async function post(provider: string, url: string, headers: Record<string, string>, body: unknown, signal: AbortSignal): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "text/event-stream", ...headers }, body: JSON.stringify(body), signal });
  } catch (e) {
    if (signal.aborted) throw e;
    throw providerError({ provider, reason: "unreachable" }, `${provider} could not be reached at ${url}: ${causeOf(e)}`, true, e);
  }
  if (!res.ok) {
    const failure = await httpFailure(provider, res);
    // An abort while the error body was read is still an abort, not the provider's answer.
    signal.throwIfAborted();
    throw failure;
  }
  if (res.body === null) throw providerError({ provider, reason: "bad_response" }, `${provider} answered without a body`, false);
  return res;
}

/** undici says only "fetch failed"; the reason is in `cause`, an AggregateError with an empty message when every address was refused. */
function causeOf(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause = e.cause as (Error & { code?: string; errors?: Error[] }) | undefined;
  if (cause === undefined) return e.message;
  return cause.message || cause.errors?.map((x) => x.message).join("; ") || cause.code || e.message;
}

/** Parses a tool call's argument JSON; the model's malformed JSON is `invalid_output`, an empty string `{}`. */
export function toolArguments(provider: string, name: string, json: string): unknown {
  if (json.trim() === "") return {};
  const tooDeep = checkJsonTextDepth(json, `${provider}'s arguments for tool ${name}`);
  if (tooDeep !== undefined) throw new ModelCallError("invalid_output", tooDeep);
  try {
    return JSON.parse(json);
  } catch (e) {
    throw new ModelCallError("invalid_output", `${provider} returned malformed JSON arguments for tool ${name}: ${json.slice(0, 200)}`, undefined, undefined, { cause: e });
  }
}
