import type pg from "pg";
import type {
  LinkAnswers, LinkEmit, LinkEmitResult, LinkFinish, LinkInvoke, LinkLost, LinkMessageHandler, LinkModelRequest, LinkEnvironmentRequest, LinkReply, LinkRequest,
  LinkReturned, LinkStop, ModelRequest, ModelResult, EnvironmentRequest, EnvironmentAnswer, TerminalStatus,
} from "@aexhq/brain-protocol";
import { BrainRuntimeError, CallRejectedError } from "../errors.ts";
import { invokeFrame } from "../dispatch/environment.ts";
import type { CallHandle, CallInvocation, CallSink } from "../dispatch/environment.ts";
import type { Dispatcher } from "../dispatch/dispatcher.ts";
import type { ToolCall } from "../dispatch/call.ts";
import type { RemoteHosts } from "../environments/host.ts";
import type { HostConnections } from "../hosts/connections.ts";
import { PeerLink } from "./peer-link.ts";
import type { OutgoingRequest } from "./peer-link.ts";
import type { Logger } from "../logger.ts";

/** The requests a host's node sends the owner for a relayed call: one per host frame (emit, emit_result, …). */
type SinkRequest = Exclude<LinkRequest, LinkInvoke>;

/**
 * Calls between a session's owner node and the node its host is connected to (issue 20: "a call is
 * routed to the node that owns the session and reaches the host through the node it is connected to").
 * The messages are the contract's link section (`Link…` in contract/protocol.schema.json); this
 * class is the generated router's handler for them (peer-link.ts routes).
 * - Owner side (`start`): the call goes as an `invoke` request over a node-to-node link; the host's
 *   frames come back as the link requests of the same type (`emit`, `emit_result`, …), applied to the
 *   owner's call (journaled there, fenced by its lease) and answered `committed` with the sequence,
 *   which the host node passes on in its own `committed`.
 * - Host side (`invoke`): the call's `invoke` frame is sent on the host's connection here, with a sink that relays.
 * A link lost with a call open ends that call `unknown` on the owner (it may or may not have run);
 * a host connection lost on the host side does the same, by a `lost` notice.
 * `host_links` (journal/postgres.ts) says which live node each host is connected to.
 */
export class HostRelay implements RemoteHosts, LinkMessageHandler {
  private links = new Map<string, Promise<PeerLink>>();
  /** Owner side: calls sent to a host on another node, by call id. */
  private sent = new Map<string, { sink: CallSink; link: PeerLink }>();

  constructor(
    private pool: pg.Pool,
    private nodeId: string,
    private token: string,
    private self: () => string,
    /** The hosts connected to this node. */
    private hosts: HostConnections,
    private dispatcher: Dispatcher,
    private refreshRegistry: () => Promise<void>,
    /**
     * How long the host's node waits for the owner to answer a relayed frame (the model's answer
     * excepted: a model call takes what it takes). A stopped owner has lost its lease by then.
     */
    private answerTimeoutMs: number,
    private logger: Logger,
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

  async nodes(): Promise<Map<string, string>> {
    const { rows } = await this.pool.query<{ host_id: string; node_id: string }>(
      `SELECT h.host_id, h.node_id FROM host_links h JOIN nodes n ON n.node_id = h.node_id WHERE n.expires_at > clock_timestamp()`,
    );
    return new Map(rows.map((r) => [r.host_id, r.node_id]));
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
      throw new BrainRuntimeError("host_unavailable", `host ${p.hostId} is connected to a node that cannot be reached (${e instanceof Error ? e.message : String(e)}); the call was not sent`, undefined, undefined, { cause: e });
    }
    this.sent.set(call.callId, { sink, link });
    try {
      await link.request({ type: "invoke", hostId: p.hostId, owner: this.self(), frame: invokeFrame(call) });
    } catch (e) {
      this.sent.delete(call.callId);
      if (e instanceof BrainRuntimeError && e.code === "unavailable") {
        // The link broke with the invoke in flight: the host may have it; the outcome is unknown.
        sink.lost(`the node host ${p.hostId} is connected to was lost while the call was sent`);
        return { stop: () => {} };
      }
      if (e instanceof BrainRuntimeError && e.code === "reattach_mismatch") {
        void sink.finish({ status: "error", error: { code: e.code, message: e.message } }).catch(() => {
          // Handled: a refused finish is a call already finished (its first outcome stands), and a failed
          // commit is logged by the call itself (ToolCall.uncommitted).
        });
        return { stop: () => {} };
      }
      throw e;
    }
    return {
      stop: (status: TerminalStatus) => {
        this.sent.delete(call.callId);
        link.notify({ type: "stop", hostId: p.hostId, callId: call.callId, status });
      },
    };
  }

  private link(url: string): Promise<PeerLink> {
    let l = this.links.get(url);
    if (l === undefined) {
      l = PeerLink.connect(url, this.token, this, this.logger).then((link) => {
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

  // Messages from other nodes, on links in either direction, each one already validated by the
  // generated link router. Host side: invoke, stop. Owner side: the host's frames of a relayed call, lost.

  /** Host side: send the call on the host's connection here; its answers go back to the owner. */
  invoke(m: LinkInvoke): LinkReply<"invoke"> {
    const { hostId, frame } = m;
    const conn = this.hosts.get(hostId);
    if (conn === undefined) throw new BrainRuntimeError("host_unavailable", `host ${hostId} is not connected to this node; the call was not sent`);
    if (!conn.advertises(frame.digest)) {
      throw new BrainRuntimeError("reattach_mismatch", `host ${hostId} is connected but did not register tool ${frame.tool} with digest ${frame.digest} (its schemas changed?); the call was not sent`);
    }
    conn.invoke(frame, new RelayedSink(frame.callId, () => this.link(m.owner), () => this.takenOver(frame.sessionId, m.owner), this.answerTimeoutMs));
    return {};
  }

  /** Host side: the call ended on its owner. */
  stop(m: LinkStop): void {
    const conn = this.hosts.get(m.hostId);
    conn?.release(m.callId);
    if (m.status === "timeout" || m.status === "cancelled") conn?.cancel(m.callId, m.status);
  }

  /** Owner side: the host of a relayed call was lost on its node: the call ends `unknown`. */
  lost(m: LinkLost): void {
    const s = this.sent.get(m.callId);
    this.sent.delete(m.callId);
    s?.sink.lost(m.message);
  }

  // Owner side: a host's frame, relayed, applied to the call as if it came from a local host.
  async emit(m: LinkEmit): Promise<LinkReply<"emit">> {
    const call = this.call(m.callId);
    return { sequence: await call.emit(m.kind, m.data), finished: call.finished };
  }
  async emitResult(m: LinkEmitResult): Promise<LinkReply<"emit_result">> {
    const call = this.call(m.callId);
    return { sequence: await call.emitResult(m.outcome, m.content), finished: call.finished };
  }
  async returned(m: LinkReturned): Promise<LinkReply<"returned">> {
    const call = this.call(m.callId);
    return { sequence: await call.returned(), finished: call.finished };
  }
  async finish(m: LinkFinish): Promise<LinkReply<"finish">> {
    const call = this.call(m.callId);
    return { sequence: await call.finish(m.outcome, m.content), finished: call.finished };
  }
  async modelRequest(m: LinkModelRequest): Promise<LinkReply<"model_request">> {
    const call = this.call(m.callId);
    return { result: await call.model(m.request), finished: call.finished };
  }
  async environmentRequest(m: LinkEnvironmentRequest): Promise<LinkReply<"environment_request">> {
    const call = this.call(m.callId);
    return { result: await call.environment(m.request), finished: call.finished };
  }

  private call(callId: string): ToolCall {
    const call = this.dispatcher.getCall(callId);
    if (call === undefined) throw new CallRejectedError("call_finished", `call ${callId} already finished (or is run by another node now)`);
    return call;
  }

  /**
   * Whether the session of a call relayed from the node at `ownerUrl` belongs to another node now.
   * A takeover ends every call it finds open `unknown` and never re-sends it, so such a call is over.
   */
  private async takenOver(sessionId: string, ownerUrl: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ url: string | null }>("SELECT n.url FROM leases l LEFT JOIN nodes n ON n.node_id = l.owner WHERE l.session_id = $1", [sessionId]);
    return rows[0] !== undefined && rows[0].url !== ownerUrl;
  }

  close(): void {
    for (const l of this.links.values()) {
      void l.then(
        (link) => link.close(),
        () => {
          // Handled: a link that never opened has nothing to close (its callers were told then).
        },
      );
    }
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

  private async op<M extends OutgoingRequest<SinkRequest>>(message: M): Promise<LinkAnswers[M["type"]]> {
    let link: PeerLink;
    try {
      link = await this.owner();
    } catch (e) {
      throw await this.unreachable(e);
    }
    // A model call and an Environment control operation (a nested call, with its own deadline) take what they take.
    const unbounded = message.type === "model_request" || message.type === "environment_request";
    const answer = await link.request(message, unbounded ? undefined : this.answerTimeoutMs).catch(async (e: unknown) => {
      if (e instanceof BrainRuntimeError && e.code === "unavailable") throw await this.unreachable(e);
      throw e instanceof BrainRuntimeError ? new CallRejectedError(e.code, e.message, e.details, e.retryable, { cause: e, final: e.final }) : e;
    });
    if (answer.finished) this.finished = true;
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
      return new CallRejectedError("call_finished", `call ${this.callId} ended: its session was taken over by another node after its owner was lost (${why}); a takeover ends open calls unknown and never re-sends them`, undefined, undefined, { cause: e });
    }
    return new CallRejectedError("unavailable", `the node that runs this call's session cannot be reached: ${why}`, undefined, true, { cause: e });
  }

  emit(kind: string, data: unknown): Promise<number> {
    return this.op({ type: "emit", callId: this.callId, kind, data }).then((a) => a.sequence);
  }
  emitResult(outcome: unknown, content?: string): Promise<number> {
    return this.op({ type: "emit_result", callId: this.callId, outcome, content }).then((a) => a.sequence);
  }
  returned(): Promise<number> {
    return this.op({ type: "returned", callId: this.callId }).then((a) => a.sequence);
  }
  finish(outcome?: unknown, content?: string): Promise<number> {
    return this.op({ type: "finish", callId: this.callId, outcome, content }).then((a) => a.sequence);
  }
  model(request: ModelRequest): Promise<ModelResult> {
    return this.op({ type: "model_request", callId: this.callId, request }).then((a) => a.result);
  }
  environment(request: EnvironmentRequest): Promise<EnvironmentAnswer> {
    return this.op({ type: "environment_request", callId: this.callId, request }).then((a) => a.result);
  }
  lost(message: string): void {
    if (this.finished) return;
    this.finished = true;
    void this.owner().then(
      (link) => link.notify({ type: "lost", callId: this.callId, message }),
      () => {
        // Handled: an owner this node cannot reach ends the call `unknown` itself when its link to here closes.
      },
    );
  }
}
