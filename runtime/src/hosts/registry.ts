import type { ToolContract } from "@aexhq/brain-protocol";
import type { HostRow, JournalStore } from "../journal/store.ts";
import { BrainRuntimeError } from "../errors.ts";
import { hashSecret, verifySecret } from "./secret.ts";

/**
 * Registered hosts, persisted in the journal store. Registrations never expire (so one with placed
 * sessions survives any disconnect and a runtime restart); a later registration must present the
 * same secret and adds contracts (union by digest).
 */
export class HostRegistry {
  private hosts = new Map<string, HostRow>();

  constructor(private store: JournalStore) {
    for (const row of store.loadHosts()) this.hosts.set(row.hostId, row);
  }

  /** Authenticates and merges `tools`; returns every digest now registered for the host. */
  register(hostId: string, secret: string, tools: ToolContract[]): string[] {
    let row = this.hosts.get(hostId);
    if (row === undefined) {
      const { salt, hash } = hashSecret(secret);
      row = { hostId, salt, hash, contracts: [], registeredAt: Date.now() };
    } else if (!verifySecret(secret, row.salt, row.hash)) {
      throw new BrainRuntimeError("unauthorized", `wrong secret for host ${hostId}`);
    }
    const byDigest = new Map(row.contracts.map((c) => [c.digest, c]));
    for (const t of tools) byDigest.set(t.digest, t);
    row = { ...row, contracts: [...byDigest.values()] };
    this.store.saveHost(row);
    this.hosts.set(hostId, row);
    return [...byDigest.keys()];
  }

  get(hostId: string): HostRow | undefined {
    return this.hosts.get(hostId);
  }

  hasDigest(hostId: string, digest: string): boolean {
    return this.hosts.get(hostId)?.contracts.some((c) => c.digest === digest) ?? false;
  }
}
