import { CLOSE } from "./connection.ts";
import type { HostConnection } from "./connection.ts";

/**
 * The host processes connected to this runtime (this node), by host id: one current connection per
 * host. Shared by the host Environment (calls for hosts connected here) and, on a node of several,
 * the relay (calls for this node's hosts from the sessions' owners), so neither needs the other.
 */
export class HostConnections {
  private connections = new Map<string, HostConnection>();
  /** When hosts no longer connected here were last seen (their connection's last sign of life). */
  private gone = new Map<string, number>();
  /** Connections of forgotten registrations: nothing is kept of them when they close. */
  private forgotten = new WeakSet<HostConnection>();

  /** A second connection with the same host id replaces the first. */
  attach(hostId: string, conn: HostConnection): void {
    const old = this.connections.get(hostId);
    this.connections.set(hostId, conn);
    if (old && old !== conn) old.fail("replaced", `host ${hostId} connected again; this connection is replaced`, CLOSE.replaced);
  }

  detach(conn: HostConnection): void {
    if (conn.hostId !== undefined && this.connections.get(conn.hostId) === conn) {
      this.connections.delete(conn.hostId);
      if (!this.forgotten.has(conn)) this.gone.set(conn.hostId, conn.lastSeenAt);
    }
  }

  /** The host's last sign of life seen here (now connected or not), if it connected here since this process started. */
  lastSeenAt(hostId: string): number | undefined {
    return this.connections.get(hostId)?.lastSeenAt ?? this.gone.get(hostId);
  }

  /** A registration forgotten (a managed host's binding ended): nothing is kept of it. */
  forget(hostId: string): void {
    this.gone.delete(hostId);
    const conn = this.connections.get(hostId);
    if (conn !== undefined) this.forgotten.add(conn);
  }

  /** The host's current connection, if connected. */
  get(hostId: string): HostConnection | undefined {
    return this.connections.get(hostId);
  }

  /** How many hosts are connected here (the brain_hosts_connected gauge). */
  get size(): number {
    return this.connections.size;
  }

  has(hostId: string): boolean {
    return this.connections.has(hostId);
  }

  /** Closes a host's connection as unauthorized (its key was revoked, its managed binding ended); its open calls end `unknown`. */
  refuse(hostId: string, message: string): void {
    this.connections.get(hostId)?.fail("unauthorized", message, CLOSE.unauthorized);
  }

  /** Shutdown: every connection is let go without a word; their open calls stay open for recovery. */
  abandonAll(): void {
    for (const c of this.connections.values()) c.abandon();
  }
}
