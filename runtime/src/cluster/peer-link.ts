import { WebSocket } from "ws";
import { answersRequest, routeLinkMessage } from "@aexhq/brain-protocol";
import type { ErrorInfo, LinkAnswer, LinkAnswers, LinkError, LinkMessage, LinkMessageError, LinkMessageHandler, LinkNotice, LinkRequest, LinkRoute } from "@aexhq/brain-protocol";
import { BrainRuntimeError, toErrorInfo } from "../errors.ts";
import { messageOf, stderrLogger } from "../logger.ts";
import type { Logger } from "../logger.ts";

/** Where nodes reach each other's relay: a WebSocket for node-to-node messages only (operator token). */
export const LINK_PATH = "/v1/cluster/link";

/** A request as its sender writes it: the link gives it its `id`. */
export type OutgoingRequest<R extends LinkRequest = LinkRequest> = R extends LinkRequest ? Omit<R, "id"> : never;

interface Waiting {
  /** The answer the peer sent (its type is checked by the request's own resolver). */
  answered(answer: Exclude<LinkAnswer, LinkError>): void;
  failed(e: Error): void;
}

/**
 * Requests and answers between two nodes over one WebSocket, in both directions. The messages are
 * the contract's link section (`LinkMessage` in contract/protocol.schema.json), routed by the
 * generated `routeLinkMessage`: a message that is not one of them is answered with an `error`
 * (`malformed_json`, `unknown_frame`, `invalid_frame`) and the link stays open. A request whose
 * link closes before its answer, or whose answer cannot be read, rejects with `unavailable`: the
 * caller cannot know whether the peer acted on it (a relayed call then ends `unknown`, never re-sent).
 */
export class PeerLink {
  private next = 0;
  private waiting = new Map<number, Waiting>();
  private closedHandlers: Array<() => void> = [];
  closed = false;

  /**
   * @param handler what this node does with the peer's requests and notices (the relay).
   * @param peer names the other node in log lines.
   */
  constructor(
    private ws: WebSocket,
    private handler: LinkMessageHandler,
    private peer: string,
    private logger: Logger = stderrLogger(),
  ) {
    ws.on("message", (data, isBinary) => {
      if (isBinary) return this.refuse({ code: "invalid_frame", message: "link messages are UTF-8 JSON text messages" });
      this.receive(data.toString());
    });
    ws.on("close", () => this.onClose());
    ws.on("error", () => this.onClose());
  }

  /** Opens a link to a node's URL (http://…), authenticated with the operator token every node shares. */
  static connect(url: string, token: string, handler: LinkMessageHandler, logger?: Logger): Promise<PeerLink> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url.replace(/^http/, "ws") + LINK_PATH, { headers: { authorization: `Bearer ${token}` } });
      ws.once("open", () => resolve(new PeerLink(ws, handler, `the node at ${url}`, logger)));
      ws.once("error", (e) => reject(new BrainRuntimeError("unavailable", `node ${url} cannot be reached: ${e.message}`, undefined, true)));
      ws.once("unexpected-response", (_req, res) => reject(new BrainRuntimeError("unavailable", `node ${url} refused the link (HTTP ${res.statusCode})`, undefined, true)));
    });
  }

  private receive(raw: string): void {
    let routed: LinkRoute;
    try {
      routed = routeLinkMessage(raw, this.handler);
    } catch (e) {
      // A notice's handler threw: nothing to answer, but not silent.
      this.logger.error("a link message from another node failed", { peer: this.peer, error: messageOf(e) });
      return;
    }
    switch (routed.kind) {
      case "notice":
        return;
      case "answer":
        return this.settle(routed.answer);
      case "request": {
        const re = routed.id;
        routed.answer.then(
          (answer) => this.send(answer),
          (e: unknown) => this.send({ type: "error", re, error: toErrorInfo(e) }),
        );
        return;
      }
      case "error":
        return this.refuse(routed.error);
    }
  }

  /**
   * A message that could not be routed. An unreadable answer fails the request it names
   * (`unavailable`: whether the peer acted is unknown) and is not answered; anything else is
   * answered with an `error`, naming its `id` when it had one.
   */
  private refuse(e: LinkMessageError): void {
    const error: ErrorInfo = { code: e.code, message: e.message };
    if (e.details !== undefined) error.details = e.details;
    if (e.re !== undefined) {
      this.fail(e.re, new BrainRuntimeError("unavailable", `the answer of ${this.peer} could not be read (${e.code}: ${e.message}); whether it acted on the request is unknown`, undefined, true));
      if (e.id === undefined) return;
    }
    this.send(e.id === undefined ? { type: "error", error } : { type: "error", re: e.id, error });
  }

  private settle(answer: LinkAnswer): void {
    if (answer.type !== "error") return this.waiting.get(answer.re)?.answered(answer);
    const { re, error } = answer;
    if (re === undefined) {
      // The peer could not route a message of ours that named no request: a bug or a version skew, logged.
      this.logger.error("another node refused a link message of this node's", { peer: this.peer, code: error.code, message: error.message });
      return;
    }
    this.fail(re, BrainRuntimeError.of(error));
  }

  private fail(re: number, e: Error): void {
    this.waiting.get(re)?.failed(e);
  }

  /**
   * Sends a request and resolves with its answer, typed by the contract; an `error` answer rejects
   * with it. With `timeoutMs`, a peer that does not answer in time (stopped, or stuck) fails it with
   * `unavailable` like a closed link, and its late answer is dropped.
   */
  request<M extends OutgoingRequest>(message: M, timeoutMs?: number): Promise<LinkAnswers[M["type"]]> {
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
        answered: (answer) => {
          clearTimeout(timer);
          this.waiting.delete(id);
          const got = answer.type;
          if (answersRequest<M["type"]>(message.type, answer)) resolve(answer);
          else reject(new BrainRuntimeError("unavailable", `${this.peer} answered ${message.type} with ${got}; whether it acted on it is unknown`, undefined, true));
        },
        failed: (e) => {
          clearTimeout(timer);
          this.waiting.delete(id);
          reject(e);
        },
      });
      this.send({ ...message, id });
    });
  }

  notify(m: LinkNotice): void {
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
    for (const w of this.waiting.values()) w.failed(new BrainRuntimeError("unavailable", "the link to the other node closed before it answered", undefined, true));
    this.waiting.clear();
    for (const fn of this.closedHandlers) fn();
  }
}
