import { request } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { LIMITS } from "@aexhq/brain-protocol";
import { BrainRuntimeError } from "../errors.ts";

/**
 * Reads the request's body into memory; returns a maker of readables that replay it with the
 * original's method, URL, headers and socket, one per use: forwarded, forwarded again, or handled here.
 */
export async function buffered(req: IncomingMessage): Promise<() => IncomingMessage> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > LIMITS.maxBodyBytes) throw new BrainRuntimeError("body_too_large", `request body over ${LIMITS.maxBodyBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  const body = Buffer.concat(chunks);
  return () => {
    const replay = Readable.from(body.length === 0 ? [] : [body]) as unknown as IncomingMessage;
    return Object.assign(replay, { method: req.method, url: req.url, headers: req.headers, httpVersion: req.httpVersion, socket: req.socket });
  };
}

/** Set on a request one node passes to another, so the receiver never passes it on again. */
export const FORWARDED_HEADER = "x-brain-forwarded-by";

/**
 * Passes an HTTP request to the node that owns its session and streams the answer back unchanged
 * (an SSE stream included: the body is piped as it comes). The caller's credentials go along: the
 * owner authorizes the request itself. Rejects with `unavailable` if the owner cannot be reached
 * (it died and its lease has not expired yet) or does not begin its answer within `answerWithinMs`,
 * before any byte of the answer was sent.
 */
export function forward(req: IncomingMessage, res: ServerResponse, target: string, via: string, answerWithinMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const url = new URL(req.url ?? "/", target);
    const headers = { ...req.headers, host: url.host, [FORWARDED_HEADER]: via };
    // An owner that accepts the connection but never answers (stopped, hung) is as unreachable as a dead one.
    const timer = setTimeout(() => out.destroy(new Error(`no answer within ${answerWithinMs} ms`)), answerWithinMs);
    const out = request(url, { method: req.method, headers }, (answer) => {
      clearTimeout(timer);
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      answer.on("end", () => resolve());
      answer.on("error", () => resolve());
      // The client went away (an SSE reader closing): stop reading from the owner too.
      res.on("close", () => {
        answer.destroy();
        resolve();
      });
    });
    out.on("error", (e) => {
      clearTimeout(timer);
      if (res.headersSent) {
        res.destroy();
        return resolve();
      }
      reject(new BrainRuntimeError("unavailable", `the node that owns this session (${target}) cannot be reached (${e.message}); another node takes its sessions over after the lease time (BRAIN_LEASE_MS): retry`, undefined, true));
    });
    req.pipe(out);
  });
}
