import type { ErrorInfo, PlacedTool } from "@aexhq/brain-protocol";
import { invokeFrame } from "../dispatch/environment.ts";
import type { CallHandle, CallInvocation, CallSink, Environment } from "../dispatch/environment.ts";
import { BrainRuntimeError } from "../errors.ts";
import { isManagedHostId } from "../hosts/registry.ts";
import type { HostRegistry } from "../hosts/registry.ts";
import type { HostConnection } from "../hosts/connection.ts";
import type { HostConnections } from "../hosts/connections.ts";

/**
 * Hosts connected to other nodes of several (cluster/host-relay.ts): admission asks whether the host
 * is connected anywhere, and a call for a host that is not connected here goes through its node.
 */
export interface RemoteHosts {
  /** Reads host registrations again (one may have been made through another node a moment ago). */
  refresh(): Promise<void>;
  connected(hostId: string): Promise<boolean>;
  /** Which live node each connected host is connected to (this one included), by host id. */
  nodes(): Promise<Map<string, string>>;
  start(call: CallInvocation, sink: CallSink): Promise<CallHandle>;
}

/** Tools placed on a connected host process: one invoke frame per call on the host's current connection. */
export class HostEnvironment implements Environment {
  readonly kind = "host" as const;

  constructor(
    private registry: HostRegistry,
    private connections: HostConnections,
    /** On a node of several: hosts connected to the other nodes. */
    private remote?: RemoteHosts,
  ) {}

  /**
   * A host registered under an API key is placed only in that key's sessions (to any other session
   * it does not exist); one registered with the operator token may be placed in any session.
   */
  async admit(tool: PlacedTool, _sessionId: string, owner?: string): Promise<ErrorInfo | undefined> {
    const p = tool.placement;
    if (p.kind !== "host") return { code: "invalid_request", message: "not a host placement" };
    if (this.remote !== undefined && !this.registry.hasDigest(p.hostId, tool.contract.digest)) await this.remote.refresh();
    const row = this.registry.get(p.hostId);
    if (row === undefined || (row.owner !== undefined && row.owner !== owner)) return { code: "not_registered", message: `host ${p.hostId} is not registered` };
    if (!this.registry.hasDigest(p.hostId, tool.contract.digest)) {
      return { code: "not_registered", message: `host ${p.hostId} did not register tool ${tool.contract.name} with digest ${tool.contract.digest}` };
    }
    if (!this.connections.has(p.hostId) && !(await this.remote?.connected(p.hostId))) return { code: "host_unavailable", message: `host ${p.hostId} is not connected` };
    return undefined;
  }

  start(call: CallInvocation, sink: CallSink): CallHandle | Promise<CallHandle> {
    const p = call.tool.placement;
    if (p.kind !== "host") throw new BrainRuntimeError("internal", "not a host placement");
    const conn = this.connections.get(p.hostId);
    if (conn === undefined && this.remote !== undefined) return this.remote.start(call, sink);
    if (conn === undefined) throw new BrainRuntimeError("host_unavailable", `host ${p.hostId} is not connected; the call was not sent`);
    if (!conn.advertises(call.tool.contract.digest)) {
      // The host came back without this contract (restarted with other schemas): never send it a
      // call for a contract it does not serve; the call was not sent, so this outcome is certain.
      void sink.finish({
        status: "error",
        error: {
          code: "reattach_mismatch",
          message: `host ${p.hostId} is connected but did not register tool ${call.tool.contract.name} with digest ${call.tool.contract.digest} (its schemas changed?); the call was not sent`,
        },
      }).catch(() => {
        // Handled: a refused finish is a call already finished (its first outcome stands), and a failed
      // commit is logged by the call itself (ToolCall.uncommitted).
      });
      return { stop: () => {} };
    }
    conn.invoke(invokeFrame(call), sink);
    return {
      stop: (status) => {
        conn.release(call.callId);
        if (status === "timeout" || status === "cancelled") conn.cancel(call.callId, status);
      },
    };
  }

  /**
   * The tools the hosts registered with `owner`'s credential (an API key id; undefined: the operator
   * token) serve on their connection here now, placed as they are (no factory options): what an MCP
   * session of that credential serves (mcp/). A tool that takes options, or whose input is no JSON
   * object (MCP requires one), is left out; of two tools with one name, the first host's (by id) wins.
   */
  servedBy(owner: string | undefined): PlacedTool[] {
    const byName = new Map<string, PlacedTool>();
    for (const row of this.registry.registeredBy(owner)) {
      if (isManagedHostId(row.hostId)) continue;
      const conn = this.connections.get(row.hostId);
      if (conn === undefined) continue;
      for (const contract of row.contracts) {
        if (!conn.advertises(contract.digest) || contract.optionsSchema !== undefined || (contract.inputSchema as { type?: unknown }).type !== "object" || byName.has(contract.name)) continue;
        byName.set(contract.name, { contract, options: {}, placement: { kind: "host", hostId: row.hostId } });
      }
    }
    return [...byName.values()];
  }

  /** A second connection with the same host id replaces the first. */
  attach(hostId: string, conn: HostConnection): void {
    this.connections.attach(hostId, conn);
  }

  detach(conn: HostConnection): void {
    this.connections.detach(conn);
  }

  /** The host's current connection, if connected. */
  connection(hostId: string): HostConnection | undefined {
    return this.connections.get(hostId);
  }

  isConnected(hostId: string): boolean {
    return this.connections.has(hostId);
  }

  /** The host's last sign of life seen by this node, if any since it started. */
  lastSeenAt(hostId: string): number | undefined {
    return this.connections.lastSeenAt(hostId);
  }

  /** Reads host registrations again on a node of several (some may have been made through another node). */
  async refresh(): Promise<void> {
    await this.remote?.refresh();
  }

  /** On a node of several: the live node each connected host is connected to; undefined on one node alone. */
  nodes(): Promise<Map<string, string>> | undefined {
    return this.remote?.nodes();
  }

  /** Closes the connections of these hosts (their API key was revoked); their open calls end `unknown`. */
  disconnect(hostIds: string[], message: string): void {
    for (const id of hostIds) this.connections.refuse(id, message);
  }

  /**
   * A Brain-managed host's binding ended for good (its process has exited): its registration is
   * forgotten, here and in the store, and a connection still attached under its id is closed.
   * An application's host is never forgotten (registry.forgetManaged).
   */
  forgetManaged(hostId: string): void {
    if (!this.registry.forgetManaged(hostId)) return;
    this.connections.forget(hostId);
    this.connections.refuse(hostId, `managed host ${hostId}: its binding ended and its registration was forgotten`);
  }

  /** Forgets every Brain-managed host registration (at start, when no binding can be running: one node alone). */
  forgetAllManaged(): number {
    const ids = this.registry.managedIds();
    for (const id of ids) this.forgetManaged(id);
    return ids.length;
  }

  close(): void {
    this.connections.abandonAll();
  }
}
