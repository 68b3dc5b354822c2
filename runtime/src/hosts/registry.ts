import type { ToolContract } from "@aexhq/brain-protocol";
import type { HostRow, RecordStore, RegistryStore } from "../journal/store.ts";
import { PendingWrites } from "../journal/pending-writes.ts";
import { BrainRuntimeError } from "../errors.ts";
import type { Redactor } from "../redact.ts";
import { hashSecret, verifySecret } from "../credentials/secret.ts";

/**
 * The host ids Brain gives the host processes it starts (managed bindings) begin with this; no
 * other host may register one (see `register`).
 */
export const MANAGED_HOST_PREFIX = "managed-";

export function isManagedHostId(hostId: string): boolean {
  return hostId.startsWith(MANAGED_HOST_PREFIX);
}

/**
 * Registered hosts, persisted in the journal store. An application's host registration never
 * expires (so one with placed sessions survives any disconnect and a runtime restart); a later
 * registration must present the same secret and adds contracts (union by digest). A Brain-managed
 * host's registration lives as long as its binding: it is forgotten (`forgetManaged`) when the
 * binding ends for good, and its id cannot be registered again.
 */
export class HostRegistry {
  private hosts = new Map<string, HostRow>();
  private writes = new PendingWrites();

  private constructor(
    private store: RegistryStore & Pick<RecordStore, "kind" | "flush">,
    private redactor: Redactor | undefined,
  ) {}

  /** The registry with the registrations the store holds. Host secrets seen at registration are redacted from what the server says and journals. */
  static async load(store: RegistryStore & Pick<RecordStore, "kind" | "flush">, redactor?: Redactor): Promise<HostRegistry> {
    const registry = new HostRegistry(store, redactor);
    await registry.reload();
    return registry;
  }

  /** Whether registrations reach the store after `register` returns (a node of several: PostgreSQL). */
  get persistsLater(): boolean {
    return this.store.kind === "postgres";
  }

  /** Resolves once every registration so far is stored. */
  async saved(): Promise<void> {
    await this.writes.settled();
    await this.store.flush();
  }

  /** Reads the registrations again (a node of several: hosts registered through the other nodes). */
  async reload(): Promise<void> {
    const rows = await this.store.loadHosts();
    this.hosts = new Map(rows.map((row) => [row.hostId, row]));
  }

  /**
   * Authenticates and merges `tools`; returns every digest now registered for the host. `owner` is
   * the API key the connection registered with (absent: the operator token); a host id belongs to
   * the credential that first registered it, and only that credential may register it again.
   * A managed host id (MANAGED_HOST_PREFIX) registers only while a binding of this process is
   * `serving` it: otherwise (its binding ended: session deleted, runtime restarted; or never Brain's)
   * it is `unauthorized`, whatever the secret.
   */
  register(hostId: string, secret: string, tools: ToolContract[], owner?: string, serving = false): string[] {
    this.redactor?.add(secret);
    if (isManagedHostId(hostId) && !serving) {
      throw new BrainRuntimeError(
        "unauthorized",
        `host ${hostId} is not a Brain-managed host serving a binding now (its session was deleted, or the runtime restarted, and its registration was forgotten); host ids starting "${MANAGED_HOST_PREFIX}" are Brain's own`,
        { hostId },
      );
    }
    let row = this.hosts.get(hostId);
    if (row === undefined) {
      const { salt, hash } = hashSecret(secret);
      row = { hostId, salt, hash, contracts: [], registeredAt: Date.now() };
      if (owner !== undefined) row.owner = owner;
    } else if (row.owner !== owner || !verifySecret(secret, row.salt, row.hash)) {
      throw new BrainRuntimeError("unauthorized", `wrong secret for host ${hostId}, or it is registered under another credential`);
    }
    const byDigest = new Map(row.contracts.map((c) => [c.digest, c]));
    for (const t of tools) byDigest.set(t.digest, t);
    row = { ...row, contracts: [...byDigest.values()] };
    this.writes.add(this.store.saveHost(row));
    this.hosts.set(hostId, row);
    return [...byDigest.keys()];
  }

  /**
   * Forgets a Brain-managed host's registration, here and in the store (its binding ended for good).
   * Never an application's host: an id without MANAGED_HOST_PREFIX is left as it is (false).
   */
  forgetManaged(hostId: string): boolean {
    if (!isManagedHostId(hostId)) return false;
    const known = this.hosts.delete(hostId);
    this.writes.add(this.store.deleteHost(hostId));
    return known;
  }

  /** The Brain-managed host ids registered now. */
  managedIds(): string[] {
    return [...this.hosts.keys()].filter(isManagedHostId);
  }

  /** Registrations made with `owner`'s credential (an API key id; undefined: the operator token), by host id. */
  registeredBy(owner: string | undefined): HostRow[] {
    return [...this.hosts.values()].filter((r) => r.owner === owner).sort((a, b) => (a.hostId < b.hostId ? -1 : a.hostId > b.hostId ? 1 : 0));
  }

  /** Hosts registered under `owner` (an API key id). */
  ownedBy(owner: string): string[] {
    return [...this.hosts.values()].filter((r) => r.owner === owner).map((r) => r.hostId);
  }

  /** Whether a host of this id (raw, still percent-encoded as in a URL path) is registered. */
  knows(encodedHostId: string): boolean {
    try {
      return this.get(decodeURIComponent(encodedHostId)) !== undefined;
    } catch {
      return true; // not a valid id: the route answers it
    }
  }

  /** Every registration, oldest first (GET /v1/hosts). */
  all(): HostRow[] {
    return [...this.hosts.values()].sort((a, b) => a.registeredAt - b.registeredAt || (a.hostId < b.hostId ? -1 : 1));
  }

  get(hostId: string): HostRow | undefined {
    return this.hosts.get(hostId);
  }

  hasDigest(hostId: string, digest: string): boolean {
    return this.hosts.get(hostId)?.contracts.some((c) => c.digest === digest) ?? false;
  }
}
