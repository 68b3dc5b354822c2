import type { ServerResponse } from "node:http";
import type { ErrorBody } from "@aexhq/brain-protocol";
import { BrainRuntimeError, LeaseLostError, toErrorInfo } from "../errors.ts";
import type { Redactor } from "../redact.ts";
import { retryAfterMs } from "../limits/key-limits.ts";

/**
 * Answers `body` as JSON with `status` (and extra `headers`). Harmless on a response already
 * answered or whose client is gone (a waiting request answered by two causes at once): it only ends
 * a response whose head was sent (an SSE stream) and writes nothing twice.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Readonly<Record<string, string>>): void {
  if (res.writableEnded || res.destroyed) return;
  if (res.headersSent) return void res.end();
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** Every error response is an ErrorBody with the code's status, without the server's secrets when a redactor is given. */
export function sendError(res: ServerResponse, error: unknown, redactor?: Redactor): void {
  // A record this node could not write because another node holds its session now: nothing was
  // written, so the client sends the request again (it reaches the owner). Whatever route wrote it.
  const e = error instanceof LeaseLostError ? leaseLost(error) : error;
  const status = e instanceof BrainRuntimeError ? e.status : 500;
  const info = toErrorInfo(e);
  const body: ErrorBody = { error: redactor === undefined ? info : redactor.redact(info) };
  // A key at one of its limits is told when to come back (whole seconds, at least 1).
  const headers = e instanceof BrainRuntimeError && e.code === "limit_exceeded" ? { "retry-after": String(Math.max(1, Math.ceil(retryAfterMs(e) / 1000))) } : undefined;
  sendJson(res, status, body, headers);
}

function leaseLost(e: LeaseLostError): BrainRuntimeError {
  return new BrainRuntimeError("unavailable", `this node stopped running session ${e.sessionId} (another node holds it now, or this node's lease ran out) and could not journal this request's record: send it again (with the same Idempotency-Key), it reaches the session's owner`, undefined, true, { cause: e });
}
