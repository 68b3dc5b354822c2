import { Agent, request } from "node:http";
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
 * A forward that ended before the owner began its answer. `delivered` says whether the owner may
 * have received the request: false only when no connection to it was ever made, so sending it again
 * cannot run it twice; true when the connection was made (the owner may be running it now).
 */
export class ForwardFailed extends BrainRuntimeError {
  constructor(
    readonly delivered: boolean,
    message: string,
  ) {
    super("unavailable", message, undefined, true);
  }
}

/**
 * Requests that change something go over a connection of their own, so "connected" is exactly
 * "the owner may have it": a kept-alive socket the owner closed at the same moment would leave that
 * unknown. Reads reuse connections (sending a read again is harmless).
 */
const ONE_SHOT = new Agent({ keepAlive: false });

export interface ForwardWatch {
  /** Asked every `everyMs` until the answer ends: true once the owner is lost (its node lease ran out). */
  ownerLost: () => Promise<boolean>;
  everyMs: number;
}

/**
 * Passes an HTTP request to the node that owns its session, once, and streams the answer back
 * unchanged (an SSE stream included: the body is piped as it comes). The caller's credentials go
 * along: the owner authorizes the request itself. Nothing here times out by the clock: the owner
 * answers within its own bounds (a `wait: true` message and an SSE stream have theirs), the client
 * may go away, and the owner may be lost (dead, stopped, cut off), which `watch` finds out from its
 * node lease. Rejects with ForwardFailed when the owner cannot be reached or is lost before its
 * answer began; once the answer began, a lost owner ends the client's response (an SSE reader
 * resumes elsewhere with Last-Event-ID).
 */
export function forward(req: IncomingMessage, res: ServerResponse, target: string, via: string, watch: ForwardWatch): Promise<void> {
  return new Promise((resolve, reject) => {
    const url = new URL(req.url ?? "/", target);
    const headers = { ...req.headers, host: url.host, [FORWARDED_HEADER]: via };
    const reads = req.method === "GET" || req.method === "HEAD";
    let delivered = false;
    let settled = false;
    const finish = (e?: ForwardFailed) => {
      if (settled) return;
      settled = true;
      clearInterval(watching);
      if (e === undefined) return resolve();
      out.destroy();
      if (res.headersSent) {
        res.destroy();
        resolve();
      } else reject(e);
    };
    const out = request(url, { method: req.method, headers, ...(reads ? {} : { agent: ONE_SHOT }) }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      answer.on("end", () => finish());
      answer.on("error", () => finish());
    });
    out.on("socket", (socket) => {
      // A reused socket is connected already: whatever it carries may have reached the owner.
      if (!socket.connecting) delivered = true;
      else socket.once("connect", () => (delivered = true));
    });
    out.on("error", (e) => {
      finish(
        new ForwardFailed(
          delivered,
          delivered
            ? `the node that owns this session (${target}) was lost after the request reached it (${e.message})`
            : `the node that owns this session (${target}) cannot be reached (${e.message}); another node takes its sessions over after the lease time (BRAIN_LEASE_MS): retry`,
        ),
      );
    });
    // The client went away (an SSE reader closing, a caller giving up): stop the forward too.
    res.on("close", () => {
      if (settled) return;
      out.destroy();
      finish();
    });
    let asking = false;
    const watching = setInterval(() => {
      if (asking) return;
      asking = true;
      void watch
        .ownerLost()
        .then((lost) => {
          if (lost) finish(new ForwardFailed(delivered, `the node that owns this session (${target}) was lost (its lease ran out) before it answered`));
        })
        .catch(() => {
          // Handled: the database is unreachable, which the node's lease renewal logs; the next check asks again.
        })
        .finally(() => (asking = false));
    }, watch.everyMs);
    watching.unref();
    req.pipe(out);
  });
}
