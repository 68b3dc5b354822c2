import type { ToolContract } from "@aexhq/brain-protocol";
import type { HostRow, JournalStore } from "../journal/store.ts";
import { BrainRuntimeError } from "../errors.ts";
import type { Redactor } from "../redact.ts";
import { hashSecret, verifySecret } from "../credentials/secret.ts";

/**
 * Registered hosts, persisted in the journal store. Registrations never expire (so one with placed
 * sessions survives any disconnect and a runtime restart); a later registration must present the
 * same secret and adds contracts (union by digest).
 */
export class HostRegistry {
  private hosts = new Map<string, HostRow>();

  constructor(
    private store: JournalStore,
    /** Host secrets seen at registration are redacted from what the server says and journals. */
    private redactor?: Redactor,
  ) {
    this.reload();
  }

  /** Whether registrations reach the store after `register` returns (a node of several: PostgreSQL). */
  get persistsLater(): boolean {
    return this.store.kind === "postgres";
  }

  /** Resolves once every registration so far is stored. */
  async saved(): Promise<void> {
    await this.store.flush();
  }

  /** Reads the registrations again (a node of several: hosts registered through the other nodes). */
  reload(): void {
    this.hosts = new Map(this.store.loadHosts().map((row) => [row.hostId, row]));
  }

  /**
   * Authenticates and merges `tools`; returns every digest now registered for the host. `owner` is
   * the API key the connection registered with (absent: the operator token); a host id belongs to
   * the credential that first registered it, and only that credential may register it again.
   */
  register(hostId: string, secret: string, tools: ToolContract[], owner?: string): string[] {
    this.redactor?.add(secret);
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
    this.store.saveHost(row);
    this.hosts.set(hostId, row);
    return [...byDigest.keys()];
  }

  /** Hosts registered under `owner` (an API key id). */
  ownedBy(owner: string): string[] {
    return [...this.hosts.values()].filter((r) => r.owner === owner).map((r) => r.hostId);
  }

  get(hostId: string): HostRow | undefined {
    return this.hosts.get(hostId);
  }

  hasDigest(hostId: string, digest: string): boolean {
    return this.hosts.get(hostId)?.contracts.some((c) => c.digest === digest) ?? false;
  }
}
