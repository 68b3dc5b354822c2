import { WebSocket } from "ws";
import { validate } from "@aexhq/brain-protocol";
import type { LinkMessage } from "@aexhq/brain-protocol";
import { within } from "./provider-server.ts";

/**
 * A raw node-to-node link end for tests: a real `ws` WebSocket that sends any text and collects
 * what the other end sends, noting whatever does not match the contract's `LinkMessage`.
 */
export class RawLink {
  readonly messages: LinkMessage[] = [];
  /** Messages received that are not valid LinkMessages; tests assert this stays empty. */
  readonly invalid: unknown[] = [];
  private waiters: Array<{ pred: (m: LinkMessage) => boolean; resolve: (m: LinkMessage) => void }> = [];

  constructor(readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const m: unknown = JSON.parse(data.toString());
      if (!validate.LinkMessage.Check(m)) {
        this.invalid.push(m);
        return;
      }
      const w = this.waiters.findIndex((x) => x.pred(m));
      if (w >= 0) this.waiters.splice(w, 1)[0]!.resolve(m);
      else this.messages.push(m);
    });
  }

  /** Opens /v1/cluster/link on a node with the operator token, as cluster/peer-link.ts does. */
  static async open(nodeUrl: string, token: string): Promise<RawLink> {
    const ws = new WebSocket(nodeUrl.replace(/^http/, "ws") + "/v1/cluster/link", { headers: { authorization: `Bearer ${token}` } });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    return new RawLink(ws);
  }

  send(message: string | object): void {
    this.ws.send(typeof message === "string" ? message : JSON.stringify(message));
  }

  /** The first message (already received or still to come) matching `pred`. */
  next(pred: (m: LinkMessage) => boolean = () => true, timeoutMs = 5000): Promise<LinkMessage> {
    const i = this.messages.findIndex(pred);
    if (i >= 0) return Promise.resolve(this.messages.splice(i, 1)[0]!);
    const waiter = { pred, resolve: (_: LinkMessage) => {} };
    const p = new Promise<LinkMessage>((resolve) => (waiter.resolve = resolve));
    this.waiters.push(waiter);
    return within(p, timeoutMs, `no link message matching ${pred.toString()}; got ${JSON.stringify(this.messages)}`).finally(() => {
      const w = this.waiters.indexOf(waiter);
      if (w >= 0) this.waiters.splice(w, 1);
    });
  }

  close(): void {
    this.ws.close();
  }
}
