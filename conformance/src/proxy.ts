import { createServer, type Server, type IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer, type RawData } from "ws";
import { canonicalJson } from "@aexhq/brain-protocol";

/** A frame the proxy answers itself instead of passing it on (a scenario's `faults`). */
export interface ArmedFault {
  answer: "unavailable" | "final_conflict";
  /** The host frame type it answers: the first one after arming. */
  frame: string;
}

/** What the host did about one armed fault, for the runner's rule check. */
export interface FaultRecord {
  fault: ArmedFault;
  /** The frame the proxy answered, once one came (`body`: the frame without its ref, canonical JSON). */
  answered?: { ref: unknown; callId: string; body: string; at: number };
  /** Later frames of the host for the same call: type, ref, body (without the ref) and when they arrived. */
  after: { type: string; ref: unknown; body: string; at: number }[];
}

/** One host connection: the host's side (downstream) and the proxy's own to the runtime (upstream). */
interface Link {
  down: WebSocket;
  up: WebSocket;
  /** Stalled: nothing passes either way any more (a silent runtime, as the host sees it). */
  stalled: boolean;
  /** Which connection of the subject this is (1, 2, …). */
  id: number;
}

/** A frame the host sent for a call on another connection than the one the call was invoked on. */
export interface StaleFrame { type: string; callId: string; invokedOn: number; sentOn: number }

/**
 * A loopback WebSocket proxy between a host subject and the runtime, frame by frame, so the runner
 * can inject the faults a binding must survive whatever language it is written in: drop every
 * connection, stall one (nothing passes, pings included: a silent runtime), leave upgrades hanging,
 * close with 4401, and answer a chosen host frame itself (`unavailable`, `conflict` with `final`).
 * WebSocket pings and pongs are passed on, never answered here, so the runtime's liveness check
 * still sees the host itself. Anything but the host channel (HTTP) is refused: subjects only connect.
 */
export class FaultProxy {
  private readonly links = new Set<Link>();
  private readonly hanging = new Set<Duplex>();
  private readonly wss = new WebSocketServer({ noServer: true, autoPong: false, maxPayload: 64 * 1024 * 1024 });
  private server?: Server;
  private hangUpgrades = 0;
  private armed: FaultRecord[] = [];
  /** WebSocket connections the host opened through the proxy (upgrades accepted). */
  upgrades = 0;
  /** Upgrade requests that arrived, hung ones included. */
  attempts = 0;
  /** The last `error` frames the runtime sent the subject (code: message). */
  errors: string[] = [];
  /** Frames for calls invoked on an earlier connection, since the last arm(). */
  stale: StaleFrame[] = [];
  private readonly invokedOn = new Map<string, number>();

  constructor(private readonly target: URL) {}

  async start(): Promise<string> {
    this.server = createServer((_req, res) => res.writeHead(404).end());
    this.server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.attempts++;
      socket.on("error", () => socket.destroy());
      if (this.hangUpgrades > 0) {
        // Accepted TCP, no answer to the upgrade: the host's connection attempt must time out.
        this.hangUpgrades--;
        this.hanging.add(socket);
        socket.once("close", () => this.hanging.delete(socket));
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (down) => this.link(down, req.url ?? "/"));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    if (typeof address !== "object" || !address) throw new Error("proxy has no address");
    return `http://127.0.0.1:${address.port}`;
  }

  private link(down: WebSocket, path: string): void {
    this.upgrades++;
    const url = new URL(path, this.target);
    url.protocol = "ws:";
    const up = new WebSocket(url, { autoPong: false, maxPayload: 64 * 1024 * 1024 });
    const link: Link = { down, up, stalled: false, id: this.upgrades };
    this.links.add(link);
    const queued: { data: RawData; binary: boolean }[] = [];
    up.on("open", () => {
      for (const m of queued.splice(0)) up.send(m.data, { binary: m.binary });
    });
    down.on("message", (data, binary) => {
      if (link.stalled) return;
      if (!binary && this.intercept(link, String(data))) return;
      if (up.readyState === WebSocket.OPEN) up.send(data, { binary });
      else queued.push({ data, binary });
    });
    up.on("message", (data, binary) => {
      if (!binary) this.noteUpstream(String(data), link);
      if (!link.stalled && down.readyState === WebSocket.OPEN) down.send(data, { binary });
    });
    up.on("ping", (data) => { if (!link.stalled && down.readyState === WebSocket.OPEN) down.ping(data); });
    down.on("pong", (data) => { if (!link.stalled && up.readyState === WebSocket.OPEN) up.pong(data); });
    down.on("ping", (data) => { if (!link.stalled && up.readyState === WebSocket.OPEN) up.ping(data); });
    up.on("pong", (data) => { if (!link.stalled && down.readyState === WebSocket.OPEN) down.pong(data); });
    // A close passes on with its code; a stalled link passes nothing on (the host must notice the silence itself).
    up.on("close", (code, reason) => {
      if (!link.stalled) closeWith(down, code, reason.toString());
    });
    down.on("close", (code, reason) => {
      this.links.delete(link);
      closeWith(up, code, reason.toString());
    });
    up.on("error", () => undefined);
    down.on("error", () => undefined);
  }

  /**
   * Notes what the host must know of a runtime frame: the connection each call was invoked on, and
   * `error` frames (a refused register says why a subject never registered).
   */
  private noteUpstream(text: string, link: Link): void {
    if (text.startsWith('{"type":"invoke"')) {
      try {
        this.invokedOn.set((JSON.parse(text) as { callId: string }).callId, link.id);
      } catch {
        // Not JSON: the subject sees the same text and answers it.
      }
      return;
    }
    if (!text.startsWith('{"type":"error"')) return;
    try {
      const { error } = JSON.parse(text) as { error: { code: string; message: string } };
      this.errors = [...this.errors, `${error.code}: ${error.message}`].slice(-3);
    } catch {
      // Not JSON: nothing to keep.
    }
  }

  /** Whether an armed fault took this host frame (answered here, not passed on). */
  private intercept(link: Link, text: string): boolean {
    let frame: { type?: unknown; ref?: unknown; callId?: unknown };
    try {
      frame = JSON.parse(text) as typeof frame;
    } catch {
      return false;
    }
    if (typeof frame.callId !== "string" || typeof frame.type !== "string") return false;
    // A frame for a call of an earlier connection: the host replayed it or kept working after the loss.
    const invokedOn = this.invokedOn.get(frame.callId);
    if (invokedOn !== undefined && invokedOn !== link.id) this.stale.push({ type: frame.type, callId: frame.callId, invokedOn, sentOn: link.id });
    const { ref, ...rest } = frame;
    const body = canonicalJson(rest);
    for (const r of this.armed) {
      if (r.answered?.callId === frame.callId) r.after.push({ type: frame.type, ref, body, at: Date.now() });
    }
    const fault = this.armed.find((r) => r.answered === undefined && r.fault.frame === frame.type);
    if (fault === undefined) return false;
    fault.answered = { ref, callId: frame.callId, body, at: Date.now() };
    const error = fault.fault.answer === "unavailable"
      ? { code: "unavailable", message: "conformance fault: the node that runs this call's session cannot be reached; send the frame again with a new ref", retryable: true }
      : { code: "conflict", message: "conformance fault: the node that ran this call's session lost its lease; the call is over", final: true };
    const answer = frame.type === "model_request" ? "model_result" : frame.type === "environment_request" ? "environment_result" : "rejected";
    link.down.send(JSON.stringify({ type: answer, ref: frame.ref, callId: frame.callId, error }));
    return true;
  }

  /** Arms faults for the next scenario (replacing earlier ones); returns their records. */
  arm(faults: ArmedFault[]): FaultRecord[] {
    this.armed = faults.map((fault) => ({ fault, after: [] }));
    this.stale = [];
    return this.armed;
  }

  /** Destroys every open connection; new ones are accepted again right away. */
  drop(): void {
    for (const l of this.links) {
      l.down.terminate();
      l.up.terminate();
    }
    this.links.clear();
    for (const s of this.hanging) s.destroy();
  }

  /**
   * Every open connection goes silent both ways (frames and pings): the runtime drops its side after
   * its host timeout, and the host must find the silence by itself. New connections pass normally.
   */
  stall(): void {
    for (const l of this.links) l.stalled = true;
  }

  /** Drops every connection and leaves the next `n` upgrade requests unanswered (TCP accepted). */
  hangNext(n: number): void {
    this.hangUpgrades = n;
    this.drop();
  }

  /** Sends every host `error` (no ref) with `code`, closes it with `closeCode`, and closes the runtime's side normally. */
  closeAll(closeCode: number, code: string, message: string): void {
    for (const l of [...this.links]) {
      l.stalled = true;
      if (l.down.readyState === WebSocket.OPEN) l.down.send(JSON.stringify({ type: "error", error: { code, message } }));
      l.down.close(closeCode, code);
      l.up.close(1000, "conformance fault");
    }
  }

  async close(): Promise<void> {
    this.drop();
    this.wss.close();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** Closes `ws` with a code the peer may be sent (1005/1006 are never sent: a plain terminate). */
function closeWith(ws: WebSocket, code: number, reason: string): void {
  if (ws.readyState === WebSocket.CLOSED || ws.readyState === WebSocket.CLOSING) return;
  if (code === 1000 || (code >= 1001 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999)) {
    if (ws.readyState === WebSocket.CONNECTING) return ws.terminate();
    ws.close(code, reason.slice(0, 120));
  } else ws.terminate();
}
