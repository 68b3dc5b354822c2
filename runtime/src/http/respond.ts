import type { ServerResponse } from "node:http";
import type { ErrorBody } from "@aexhq/brain-protocol";
import { BrainRuntimeError, toErrorInfo } from "../errors.ts";
import type { Redactor } from "../redact.ts";

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
export function sendError(res: ServerResponse, e: unknown, redactor?: Redactor): void {
  const status = e instanceof BrainRuntimeError ? e.status : 500;
  const info = toErrorInfo(e);
  const body: ErrorBody = { error: redactor === undefined ? info : redactor.redact(info) };
  sendJson(res, status, body);
}
