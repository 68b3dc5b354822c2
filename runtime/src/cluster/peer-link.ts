import { WebSocket } from "ws";
import type { ErrorInfo } from "@aexhq/brain-protocol";
import { BrainRuntimeError, toErrorInfo } from "../errors.ts";

/** Where nodes reach each other's relay: a WebSocket for node-to-node messages only (operator token). */
export const LINK_PATH = "/v1/cluster/link";

/** One message between nodes: a request (`id`), its answer (`re`), or a one-way notice (neither). */
export interface LinkMessage {
  id?: number;
  re?: number;
  t: string;
  error?: ErrorInfo;
  [k: string]: unknown;
}

export type LinkHandler = (m: LinkMessage) => Promise<Record<string, unknown> | void> | Record<string, unknown> | void;

/**
 * Requests and answers between two nodes over one WebSocket, in both directions. A request whose
 * link closes before its answer rejects with `unavailable`: the caller cannot know whether the peer
 * acted on it (a relayed call then ends `unknown`, never re-sent).
 */
export class PeerLink {
  private next = 0;
  private waiting = new Map<number, { resolve: (m: LinkMessage) => void; reject: (e: Error) => void }>();
  private closedHandlers: Array<() => void> = [];
  closed = false;

  constructor(private ws: WebSocket, handle: LinkHandler) {
    ws.on("message", (data) => {
      let m: LinkMessage;
      try {
        m = JSON.parse(data.toString()) as LinkMessage;
      } catch {
        return;
      }
      if (m.re !== undefined) {
        const w = this.waiting.get(m.re);
        this.waiting.delete(m.re);
        if (w === undefined) return;
        if (m.error !== undefined) w.reject(BrainRuntimeError.of(m.error));
        else w.resolve(m);
        return;
      }
      const id = m.id;
      Promise.resolve()
        .then(() => handle(m))
        .then(
          (answer) => id !== undefined && this.send({ re: id, t: "ok", ...(answer ?? {}) }),
          (e) => id !== undefined && this.send({ re: id, t: "error", error: toErrorInfo(e) }),
        );
    });
    ws.on("close", () => this.onClose());
    ws.on("error", () => this.onClose());
  }

  /** Opens a link to a node's URL (http://…), authenticated with the operator token every node shares. */
  static connect(url: string, token: string, handle: LinkHandler): Promise<PeerLink> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url.replace(/^http/, "ws") + LINK_PATH, { headers: { authorization: `Bearer ${token}` } });
      ws.once("open", () => resolve(new PeerLink(ws, handle)));
      ws.once("error", (e) => reject(new BrainRuntimeError("unavailable", `node ${url} cannot be reached: ${e.message}`, undefined, true)));
      ws.once("unexpected-response", (_req, res) => reject(new BrainRuntimeError("unavailable", `node ${url} refused the link (HTTP ${res.statusCode})`, undefined, true)));
    });
  }

  /**
   * Sends a request; with `timeoutMs`, a peer that does not answer in time (stopped, or stuck) fails
   * it with `unavailable` like a closed link, and its late answer is dropped.
   */
  request(m: LinkMessage, timeoutMs?: number): Promise<LinkMessage> {
    if (this.closed) return Promise.reject(new BrainRuntimeError("unavailable", "the link to the other node is closed", undefined, true));
    const id = ++this.next;
    return new Promise((resolve, reject) => {
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.waiting.delete(id);
              reject(new BrainRuntimeError("unavailable", `the other node did not answer within ${timeoutMs} ms`, undefined, true));
            }, timeoutMs);
      timer?.unref();
      this.waiting.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.send({ ...m, id });
    });
  }

  notify(m: LinkMessage): void {
    this.send(m);
  }

  onClosed(fn: () => void): void {
    if (this.closed) fn();
    else this.closedHandlers.push(fn);
  }

  close(): void {
    this.ws.close();
    this.onClose();
  }

  private send(m: LinkMessage): void {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(JSON.stringify(m));
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    for (const w of this.waiting.values()) w.reject(new BrainRuntimeError("unavailable", "the link to the other node closed before it answered", undefined, true));
    this.waiting.clear();
    for (const fn of this.closedHandlers) fn();
  }
}
