import type pg from "pg";
import type { ModelRequest, TerminalStatus } from "@aexhq/brain-protocol";
import { BrainRuntimeError, CallRejectedError } from "../errors.ts";
import type { CallHandle, CallInvocation, CallSink } from "../dispatch/environment.ts";
import type { Dispatcher } from "../dispatch/dispatcher.ts";
import type { HostEnvironment, RemoteHosts } from "../environments/host.ts";
import { PeerLink } from "./peer-link.ts";
import type { LinkMessage } from "./peer-link.ts";

type SinkOp = "emit" | "emitResult" | "returned" | "finish" | "model";
/** A sink call's arguments by name: JSON keeps an absent one absent (in an array it would become null). */
interface SinkArgs {
  kind?: string;
  data?: unknown;
  outcome?: unknown;
  content?: string;
  request?: ModelRequest;
}

/**
 * Calls between a session's owner node and the node its host is connected to (issue 20: "a call is
 * routed to the node that owns the session and reaches the host through the node it is connected to").
 * - Owner side (`start`): the call goes as an `invoke` request over a node-to-node link; the host's
 *   answers come back as `sink` requests, applied to the owner's call (journaled there, fenced by its
 *   lease) and answered with the committed sequence, which the host node passes on as `committed`.
 * - Host side (`handle`): an `invoke` is sent on the host's connection here, with a sink that relays.
 * A link lost with a call open ends that call `unknown` on the owner (it may or may not have run);
 * a host connection lost on the host side does the same, by a `lost` notice.
 * `host_links` (journal/postgres.ts) says which live node each host is connected to.
 */
export class HostRelay implements RemoteHosts {
  private links = new Map<string, Promise<PeerLink>>();
  /** Owner side: calls sent to a host on another node, by call id. */
  private sent = new Map<string, { sink: CallSink; link: PeerLink }>();

  constructor(
    private pool: pg.Pool,
    private nodeId: string,
    private token: string,
    private self: () => string,
    private hosts: HostEnvironment,
    private dispatcher: () => Dispatcher,
    private refreshRegistry: () => Promise<void>,
    /**
     * How long the host's node waits for the owner to answer a relayed frame (the model's answer
     * excepted: a model call takes what it takes). A stopped owner has lost its lease by then.
     */
    private answerTimeoutMs: number,
  ) {}

  /** A host connected to this node: where the other nodes find it. */
  async linked(hostId: string): Promise<void> {
    await this.pool.query(
      "INSERT INTO host_links (host_id, node_id, url) VALUES ($1, $2, $3) ON CONFLICT (host_id) DO UPDATE SET node_id = EXCLUDED.node_id, url = EXCLUDED.url",
      [hostId, this.nodeId, this.self()],
    );
  }

  async unlinked(hostId: string): Promise<void> {
    await this.pool.query("DELETE FROM host_links WHERE host_id = $1 AND node_id = $2", [hostId, this.nodeId]);
  }

  /** The URL of the live node (not this one) the host is connected to, if any. */
  private async where(hostId: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ url: string }>(
      `SELECT h.url FROM host_links h JOIN nodes n ON n.node_id = h.node_id
        WHERE h.host_id = $1 AND h.node_id <> $2 AND n.expires_at > clock_timestamp()`,
      [hostId, this.nodeId],
    );
    return rows[0]?.url;
  }

  refresh(): Promise<void> {
    return this.refreshRegistry();
  }

  async connected(hostId: string): Promise<boolean> {
    return (await this.where(hostId)) !== undefined;
  }

  async start(call: CallInvocation, sink: CallSink): Promise<CallHandle> {
    const p = call.tool.placement;
    if (p.kind !== "host") throw new BrainRuntimeError("internal", "not a host placement");
    const url = await this.where(p.hostId);
    if (url === undefined) throw new BrainRuntimeError("host_unavailable", `host ${p.hostId} is not connected to any node; the call was not sent`);
    let link: PeerLink;
    try {
      link = await this.link(url);
    } catch (e) {
      throw new BrainRuntimeError("host_unavailable", `host ${p.hostId} is connected to a node that cannot be reached (${e instanceof Error ? e.message : String(e)}); the call was not sent`);
    }
    this.sent.set(call.callId, { sink, link });
    try {
      await link.request({ t: "invoke", call, owner: this.self() });
    } catch (e) {
      this.sent.delete(call.callId);
      if (e instanceof BrainRuntimeError && e.code === "unavailable") {
        // The link broke with the invoke in flight: the host may have it; the outcome is unknown.
        sink.lost(`the node host ${p.hostId} is connected to was lost while the call was sent`);
        return { stop: () => {} };
      }
      if (e instanceof BrainRuntimeError && e.code === "reattach_mismatch") {
        void sink.finish({ status: "error", error: { code: e.code, message: e.message } }).catch(() => {});
        return { stop: () => {} };
      }
      throw e;
    }
    return {
      stop: (status: TerminalStatus) => {
        this.sent.delete(call.callId);
        link.notify({ t: "stop", hostId: p.hostId, callId: call.callId, status });
      },
    };
  }

  private link(url: string): Promise<PeerLink> {
    let l = this.links.get(url);
    if (l === undefined) {
      l = PeerLink.connect(url, this.token, (m) => this.handle(m)).then((link) => {
        link.onClosed(() => {
          this.links.delete(url);
          // Calls whose host sits behind this link can no longer be answered: `unknown`.
          for (const [callId, s] of this.sent) {
            if (s.link !== link) continue;
            this.sent.delete(callId);
            if (!s.sink.finished) s.sink.lost("the node the host is connected to was lost after dispatch");
          }
        });
        return link;
      });
      l.catch(() => this.links.delete(url));
      this.links.set(url, l);
    }
    return l;
  }

  /** Messages from other nodes, on links in either direction. */
  handle(m: LinkMessage): Promise<Record<string, unknown> | void> | Record<string, unknown> | void {
    switch (m.t) {
      case "invoke":
        return this.invokeHere(m.call as CallInvocation, m.owner as string);
      case "stop": {
        const conn = this.hosts.connection(m.hostId as string);
        conn?.release(m.callId as string);
        if (m.status === "timeout" || m.status === "cancelled") conn?.cancel(m.callId as string, m.status);
        return;
      }
      case "sink":
        return this.applyHere(m.callId as string, m.op as SinkOp, (m.args ?? {}) as SinkArgs);
      case "lost": {
        const s = this.sent.get(m.callId as string);
        this.sent.delete(m.callId as string);
        s?.sink.lost(m.message as string);
        return;
      }
      default:
        throw new BrainRuntimeError("invalid_request", `unknown node-to-node message ${JSON.stringify(m.t)}`);
    }
  }

  /** Host side: send the call on the host's connection here; its answers go back to the owner. */
  private invokeHere(call: CallInvocation, owner: string): void {
    const p = call.tool.placement;
    const conn = p.kind === "host" ? this.hosts.connection(p.hostId) : undefined;
    if (conn === undefined) throw new BrainRuntimeError("host_unavailable", `host ${p.kind === "host" ? p.hostId : "?"} is not connected to this node; the call was not sent`);
    if (!conn.advertises(call.tool.contract.digest)) {
      throw new BrainRuntimeError("reattach_mismatch", `host ${p.kind === "host" ? p.hostId : "?"} is connected but did not register tool ${call.tool.contract.name} with digest ${call.tool.contract.digest} (its schemas changed?); the call was not sent`);
    }
    conn.invoke(call, new RelayedSink(call.callId, () => this.link(owner), () => this.takenOver(call.callId, owner), this.answerTimeoutMs));
  }

  /**
   * Whether the session of a call relayed from the node at `ownerUrl` belongs to another node now.
   * A takeover ends every call it finds open `unknown` and never re-sends it, so such a call is over.
   */
  private async takenOver(callId: string, ownerUrl: string): Promise<boolean> {
    const sessionId = callId.slice(0, callId.lastIndexOf(":"));
    const { rows } = await this.pool.query<{ url: string | null }>("SELECT n.url FROM leases l LEFT JOIN nodes n ON n.node_id = l.owner WHERE l.session_id = $1", [sessionId]);
    return rows[0] !== undefined && rows[0].url !== ownerUrl;
  }

  /** Owner side: a host's answer, relayed, applied to the call as if it came from a local host. */
  private async applyHere(callId: string, op: SinkOp, a: SinkArgs): Promise<Record<string, unknown>> {
    const call = this.dispatcher().getCall(callId);
    if (call === undefined) throw new CallRejectedError("call_finished", `call ${callId} already finished (or is run by another node now)`);
    if (op === "model") return { result: await call.model(a.request!), finished: call.finished };
    let sequence: number;
    if (op === "emit") sequence = await call.emit(a.kind!, a.data);
    else if (op === "emitResult") sequence = await call.emitResult(a.outcome, a.content);
    else if (op === "returned") sequence = await call.returned();
    else sequence = await call.finish(a.outcome, a.content);
    return { sequence, finished: call.finished };
  }

  close(): void {
    for (const l of this.links.values()) void l.then((link) => link.close(), () => {});
    this.links.clear();
  }
}

/** Host side: the sink of a relayed call; every answer is the owner's, over the link. */
class RelayedSink implements CallSink {
  finished = false;

  constructor(
    private callId: string,
    private owner: () => Promise<PeerLink>,
    /** The call's session belongs to another node now (cluster/host-relay.ts takenOver). */
    private takenOver: () => Promise<boolean>,
    private answerTimeoutMs: number,
  ) {}

  private async op(op: SinkOp, args: SinkArgs): Promise<LinkMessage> {
    let link: PeerLink;
    try {
      link = await this.owner();
    } catch (e) {
      throw await this.unreachable(e);
    }
    const answer = await link.request({ t: "sink", callId: this.callId, op, args }, op === "model" ? undefined : this.answerTimeoutMs).catch(async (e: unknown) => {
      if (e instanceof BrainRuntimeError && e.code === "unavailable") throw await this.unreachable(e);
      throw e instanceof BrainRuntimeError ? new CallRejectedError(e.code, e.message, e.details, e.retryable) : e;
    });
    if (answer.finished === true) this.finished = true;
    return answer;
  }

  /**
   * The owner cannot be reached: `unavailable` (retryable) while it may come back, `call_finished`
   * once another node has taken the session over (which ended this call `unknown`).
   */
  private async unreachable(e: unknown): Promise<CallRejectedError> {
    const why = e instanceof Error ? e.message : String(e);
    if (await this.takenOver().catch(() => false)) {
      this.finished = true;
      return new CallRejectedError("call_finished", `call ${this.callId} ended: its session was taken over by another node after its owner was lost (${why}); a takeover ends open calls unknown and never re-sends them`);
    }
    return new CallRejectedError("unavailable", `the node that runs this call's session cannot be reached: ${why}`, undefined, true);
  }

  emit(kind: string, data: unknown): Promise<number> {
    return this.op("emit", { kind, data }).then((a) => a.sequence as number);
  }
  emitResult(outcome: unknown, content?: string): Promise<number> {
    return this.op("emitResult", { outcome, content }).then((a) => a.sequence as number);
  }
  returned(): Promise<number> {
    return this.op("returned", {}).then((a) => a.sequence as number);
  }
  finish(outcome?: unknown, content?: string): Promise<number> {
    return this.op("finish", { outcome, content }).then((a) => a.sequence as number);
  }
  model(request: ModelRequest): Promise<never> {
    return this.op("model", { request }).then((a) => a.result as never);
  }
  lost(message: string): void {
    if (this.finished) return;
    this.finished = true;
    void this.owner().then((link) => link.notify({ t: "lost", callId: this.callId, message }), () => {});
  }
}
