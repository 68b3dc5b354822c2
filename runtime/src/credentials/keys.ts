import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { ApiKey, CreatedApiKey, Decider, KeyLimits, UpdateKeyRequest } from "@aexhq/brain-protocol";
import type { KeyRow, RecordStore, RegistryStore } from "../journal/store.ts";
import { BrainRuntimeError } from "../errors.ts";
import { tokensEqual } from "./secret.ts";
import type { Redactor } from "../redact.ts";
import { messageOf, stderrLogger } from "../logger.ts";
import type { Logger } from "../logger.ts";
import { PendingWrites } from "../journal/pending-writes.ts";
import { effectiveLimits, patchLimits } from "../limits/key-limits.ts";

/** Who a request or a host connection speaks for: the operator, or one application's API key. */
export type Principal = { kind: "operator" } | { kind: "key"; keyId: string };

export const OPERATOR: Principal = { kind: "operator" };

/** The owner a principal gives what it creates (sessions, host registrations): its key id, none for the operator. */
export function ownerOf(p: Principal): string | undefined {
  return p.kind === "key" ? p.keyId : undefined;
}

/** Whether `p` may see something owned by `owner` (absent = the operator's): the operator sees everything. */
export function maySee(p: Principal, owner: string | undefined): boolean {
  return p.kind === "operator" || p.keyId === owner;
}

const KEY = /^bk_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

/**
 * Application API keys, issued by the operator: `bk_<id>_<secret>`. The secret is 32 random bytes,
 * so a plain SHA-256 of it is stored (no slow hash is needed against guessing, and checking one
 * costs microseconds on every request); the key itself is shown once, at creation.
 */
export class KeyRing {
  private keys = new Map<string, KeyRow>();
  private revokedListeners = new Set<(keyId: string) => void>();
  private writes = new PendingWrites();
  /**
   * The server-wide default limits (BRAIN_KEY_MAX_*), for every key that sets no value of its own;
   * empty: unlimited. The operator token is never limited.
   */
  defaultLimits: KeyLimits = {};

  private constructor(
    private store: RegistryStore & Pick<RecordStore, "flush">,
    private operatorToken: string,
    private redactor: Redactor | undefined,
    private logger: Logger,
  ) {
    redactor?.add(operatorToken);
  }

  /** The key ring with the keys the store holds. Keys seen (created, or presented and valid) are redacted like every other secret. */
  static async load(store: RegistryStore & Pick<RecordStore, "flush">, operatorToken: string, redactor?: Redactor, logger: Logger = stderrLogger()): Promise<KeyRing> {
    const ring = new KeyRing(store, operatorToken, redactor, logger);
    await ring.reload();
    return ring;
  }

  /** Resolves once every key written so far is stored (a node of several: visible to the other nodes). */
  async saved(): Promise<void> {
    await this.writes.settled();
    await this.store.flush();
  }

  /**
   * Calls `listener` with the id of every key revoked from now on: revoked here (`revoke`), or found
   * revoked by `reload` (a node of several: revoked through another node, seen at this node's next
   * credentials refresh, every third of BRAIN_LEASE_MS). Returns the unsubscribe function.
   */
  onRevoked(listener: (keyId: string) => void): () => void {
    this.revokedListeners.add(listener);
    return () => this.revokedListeners.delete(listener);
  }

  /** Reads the keys again (a node of several: keys issued or revoked by the other nodes). */
  async reload(): Promise<void> {
    const rows = await this.store.loadKeys();
    const before = this.keys;
    this.keys = new Map(rows.map((row) => [row.keyId, row]));
    // A key live before and revoked now was revoked elsewhere: its listeners hear of it.
    for (const [keyId, row] of before) if (row.revokedAt === undefined && this.keys.get(keyId)?.revokedAt !== undefined) this.revoked(keyId);
  }

  private revoked(keyId: string): void {
    for (const listener of [...this.revokedListeners]) {
      try {
        listener(keyId);
      } catch (e) {
        this.logger.error("ending what a revoked key held open failed", { keyId, error: messageOf(e) });
      }
    }
  }

  /** The principal a bearer token stands for, or undefined (unknown, malformed or revoked). */
  authenticate(token: string): Principal | undefined {
    if (tokensEqual(token, this.operatorToken)) return OPERATOR;
    const m = KEY.exec(token);
    if (!m) return undefined;
    const row = this.keys.get(m[1]!);
    if (row === undefined || row.revokedAt !== undefined) return undefined;
    const given = createHash("sha256").update(m[2]!).digest();
    const stored = Buffer.from(row.hash, "hex");
    if (stored.length !== given.length || !timingSafeEqual(given, stored)) return undefined;
    this.redactor?.add(token);
    return { kind: "key", keyId: row.keyId };
  }

  /** Who `p` is, as a decision records it (tool.approval_decided `decidedBy`): the operator, or the key with the name it was issued with. */
  decider(p: Principal): Decider {
    if (p.kind === "operator") return { kind: "operator" };
    const name = this.keys.get(p.keyId)?.name;
    return name === undefined ? { kind: "key", keyId: p.keyId } : { kind: "key", keyId: p.keyId, name };
  }

  create(name: string): CreatedApiKey {
    let keyId: string;
    do keyId = randomBytes(6).toString("hex");
    while (this.keys.has(keyId));
    const secret = randomBytes(32).toString("base64url");
    const row: KeyRow = { keyId, name, hash: createHash("sha256").update(secret).digest("hex"), createdAt: Date.now() };
    this.writes.add(this.store.saveKey(row));
    this.keys.set(keyId, row);
    this.redactor?.add(`bk_${keyId}_${secret}`);
    const { id, name: label, createdAt } = this.view(row);
    return { id, name: label, createdAt, key: `bk_${keyId}_${secret}` };
  }

  list(): ApiKey[] {
    return [...this.keys.values()].sort((a, b) => a.createdAt - b.createdAt).map((row) => this.view(row));
  }

  /**
   * The limits that apply to what `owner` (an API key's id) does: its own, else the defaults;
   * undefined for the operator (no owner), who is never limited. A key this node does not know yet
   * (issued through another node a moment ago) gets the defaults.
   */
  limitsOf(owner: string | undefined): KeyLimits | undefined {
    if (owner === undefined) return undefined;
    return effectiveLimits(this.keys.get(owner)?.limits, this.defaultLimits);
  }

  /** Changes a key's own limits (PATCH /v1/keys/:id); a revoked key's too (harmless, it is refused anyway). */
  setLimits(keyId: string, patch: UpdateKeyRequest["limits"]): ApiKey {
    const row = this.keys.get(keyId);
    if (row === undefined) throw new BrainRuntimeError("not_found", `no key ${keyId}`);
    const limits = patchLimits(row.limits, patch);
    const changed: KeyRow = { ...row };
    if (Object.keys(limits).length > 0) changed.limits = limits;
    else delete changed.limits;
    this.writes.add(this.store.saveKey(changed));
    this.keys.set(keyId, changed);
    return this.view(changed);
  }

  /**
   * Revokes a key for good; revoking it again is harmless. The `onRevoked` listeners run at once
   * (before this returns), so nothing the key held open here outlives the call.
   */
  revoke(keyId: string): ApiKey {
    const row = this.keys.get(keyId);
    if (row === undefined) throw new BrainRuntimeError("not_found", `no key ${keyId}`);
    if (row.revokedAt === undefined) {
      const revoked = { ...row, revokedAt: Date.now() };
      this.writes.add(this.store.saveKey(revoked));
      this.keys.set(keyId, revoked);
      this.revoked(keyId);
    }
    return this.view(this.keys.get(keyId)!);
  }

  private view(row: KeyRow): ApiKey {
    const k: ApiKey = { id: row.keyId, name: row.name, createdAt: new Date(row.createdAt).toISOString() };
    if (row.revokedAt !== undefined) k.revokedAt = new Date(row.revokedAt).toISOString();
    if (row.limits !== undefined) k.limits = { ...row.limits };
    k.effectiveLimits = effectiveLimits(row.limits, this.defaultLimits);
    return k;
  }
}
