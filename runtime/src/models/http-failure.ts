import type { ErrorCode } from "@aexhq/brain-protocol";
import { ModelCallError } from "./provider.ts";
import { checkJsonTextDepth } from "../json-limits.ts";

/** Contract codes for a provider's HTTP status; 429 and 5xx are worth retrying (by the caller: Brain never retries). */
function codeOf(status: number): ErrorCode {
  if (status === 400 || status === 422) return "invalid_request";
  if (status === 401) return "unauthorized";
  if (status === 403) return "forbidden";
  if (status === 404) return "not_found";
  return "internal";
}

/** A provider's non-2xx answer as a ModelCallError, with the provider's own error message when it sent JSON. */
export async function httpFailure(provider: string, res: Response): Promise<ModelCallError> {
  const text = await res.text().catch(() => "");
  let message = text.slice(0, 200);
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const m = typeof body.error === "string" ? body.error : (body.error?.message ?? body.message);
    if (typeof m === "string") message = m;
  } catch {
    // Harmless: a body that is not JSON is quoted as it came (`message` above).
  }
  const retryable = res.status === 429 || res.status >= 500;
  return new ModelCallError(codeOf(res.status), `${provider} answered HTTP ${res.status}: ${message}`, { status: res.status, retryable }, retryable);
}

/** fetch, with a network failure (not an abort) turned into a ModelCallError `internal`. */
export async function post(provider: string, url: string, headers: Record<string, string>, body: unknown, signal: AbortSignal): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "text/event-stream", ...headers }, body: JSON.stringify(body), signal });
  } catch (e) {
    if (signal.aborted) throw e;
    throw new ModelCallError("internal", `${provider} could not be reached at ${url}: ${causeOf(e)}`, undefined, true, { cause: e });
  }
  if (!res.ok) {
    const failure = await httpFailure(provider, res);
    // An abort while the error body was read is still an abort, not the provider's answer.
    signal.throwIfAborted();
    throw failure;
  }
  if (res.body === null) throw new ModelCallError("internal", `${provider} answered without a body`);
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
