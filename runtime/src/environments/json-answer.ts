// What the environments that make one JSON request per call (descriptor http_json, plain-JSON HTTP
// tools) share: reading a bounded body and turning a 2xx answer into the call's value.
import { LIMITS } from "@aexhq/brain-protocol";
import { validateSchema } from "./json-schema.ts";
import { checkJsonTextDepth, tooDeepDetails } from "../json-limits.ts";

/** The outcomes these environments finish a call with (the sink checks the envelope again). */
export type JsonOutcome = { status: "ok"; value: unknown } | { status: "error"; error: { code: string; message: string; retryable?: boolean; details?: unknown } };

// A response is read into memory to become the tool's value; the sink's emission budget is far
// smaller by default, so this only stops an endless body from filling the runtime's memory.
export const MAX_RESPONSE_BYTES = LIMITS.maxBodyBytes;
/** How much of an error body is kept (in `details.body`); it is read up to four times that many bytes. */
export const ERROR_BODY_CHARS = 1000;

export function failure(code: string, message: string, details?: unknown, retryable?: boolean): JsonOutcome {
  return { status: "error", error: { code, message, ...(retryable === undefined ? {} : { retryable }), ...(details === undefined ? {} : { details }) } };
}

/** The body's text, up to `maxBytes` (then `truncated`). */
export async function readText(res: Response, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  if (res.body === null) return { text: "", truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {
        // Harmless: a body that cannot be cancelled is already closed or errored, which is what we want.
      });
      return { text: new TextDecoder().decode(Buffer.concat(chunks).subarray(0, maxBytes)), truncated: true };
    }
  }
  return { text: new TextDecoder().decode(Buffer.concat(chunks)), truncated: false };
}

/**
 * A 2xx answer as the call's outcome: its JSON body (an empty body is `null`) checked against the
 * tool's output schema when it has one. The body is a value, never an Outcome envelope. `from`
 * names the other side in messages. Rejects when the body cannot be read to its end.
 */
export async function jsonValueOutcome(res: Response, from: string, outputSchema: unknown): Promise<JsonOutcome> {
  const { text, truncated } = await readText(res, MAX_RESPONSE_BYTES);
  if (truncated) return failure("tool_error", `the response from ${from} is larger than ${MAX_RESPONSE_BYTES} bytes`, { status: res.status });
  let value: unknown = null;
  if (text.trim() !== "") {
    const tooDeep = checkJsonTextDepth(text, `the response from ${from}`);
    if (tooDeep !== undefined) return failure("invalid_output", tooDeep, { status: res.status, ...tooDeepDetails() });
    try {
      value = JSON.parse(text);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      return failure("invalid_output", `HTTP ${res.status} from ${from} is not JSON: ${why}`, { status: res.status, body: text.slice(0, ERROR_BODY_CHARS) });
    }
  }
  if (outputSchema !== undefined) {
    const found = validateSchema(outputSchema, value);
    if (found.length > 0) return failure("invalid_output", "output does not match the tool's output schema", found);
  }
  return { status: "ok", value };
}
