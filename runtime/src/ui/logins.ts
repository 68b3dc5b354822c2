import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";
import type { LoginShelf } from "../journal/shared-files.ts";

/** One /ui login: the credential the person logged in with, kept server-side. */
export interface Login {
  credential: string;
  expiresAt: number;
  /** The anti-forgery token the page sends with every action (CSRF_HEADER); in the page's HTML only. */
  csrf: string;
}

/** Where logins are kept, by the id the browser's cookie holds. */
export interface LoginKeeper {
  save(id: string, login: Login): Promise<void>;
  /** The login, or undefined for an unknown id (expiry and the credential are the caller's to check). */
  load(id: string): Promise<Login | undefined>;
  remove(id: string): Promise<void>;
}

const MAX_LOGINS = 10_000;

/** One node: logins in this process's memory (a restart ends them). */
export class MemoryLogins implements LoginKeeper {
  /** Insertion order is age, so the oldest go first when full. */
  private logins = new Map<string, Login>();

  async save(id: string, login: Login): Promise<void> {
    this.logins.set(id, login);
    if (this.logins.size > MAX_LOGINS) this.logins.delete(this.logins.keys().next().value!);
  }

  async load(id: string): Promise<Login | undefined> {
    return this.logins.get(id);
  }

  async remove(id: string): Promise<void> {
    this.logins.delete(id);
  }
}

/** How long a node trusts a login it read from the database before reading it again (a logout through another node ends it within this). */
const CACHE_MS = 1_000;

/**
 * Several nodes (issue 28): logins in the database every node reads, so a login made through one
 * node works on all. The database holds neither the cookie's id nor the credential in the clear:
 * a row is found by sha256 of the id, and the credential and anti-forgery token are sealed with
 * AES-256-GCM under a key derived from the operator token, which every node shares and the
 * database never sees (the row's id hash is the seal's associated data, so a row cannot be moved
 * under another id).
 */
export class SharedLogins implements LoginKeeper {
  private key: Buffer;
  private cache = new Map<string, { login: Login | undefined; at: number }>();

  constructor(private readonly shelf: LoginShelf, operatorToken: string) {
    this.key = Buffer.from(hkdfSync("sha256", operatorToken, "brain", "brain /ui login seal v1", 32));
  }

  async save(id: string, login: Login): Promise<void> {
    const idHash = hashOf(id);
    await this.shelf.saveLogin({ idHash, sealed: this.seal(idHash, { credential: login.credential, csrf: login.csrf }), expiresAt: login.expiresAt });
    this.remember(id, login);
  }

  async load(id: string): Promise<Login | undefined> {
    const cached = this.cache.get(id);
    if (cached !== undefined && performance.now() - cached.at < CACHE_MS) return cached.login;
    const idHash = hashOf(id);
    const row = await this.shelf.loadLogin(idHash);
    const opened = row === undefined ? undefined : this.open(idHash, row.sealed);
    const login = opened === undefined ? undefined : { ...opened, expiresAt: row!.expiresAt };
    this.remember(id, login);
    return login;
  }

  async remove(id: string): Promise<void> {
    this.cache.delete(id);
    await this.shelf.deleteLogin(hashOf(id));
  }

  private remember(id: string, login: Login | undefined): void {
    this.cache.set(id, { login, at: performance.now() });
    if (this.cache.size > MAX_LOGINS) this.cache.delete(this.cache.keys().next().value!);
  }

  private seal(idHash: string, secret: { credential: string; csrf: string }): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(idHash));
    const body = Buffer.concat([cipher.update(JSON.stringify(secret), "utf8"), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
  }

  /** The sealed secret, or undefined when it does not open (sealed under another operator token, or altered). */
  private open(idHash: string, sealed: string): { credential: string; csrf: string } | undefined {
    try {
      const raw = Buffer.from(sealed, "base64url");
      const decipher = createDecipheriv("aes-256-gcm", this.key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(idHash));
      decipher.setAuthTag(raw.subarray(12, 28));
      const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
      return JSON.parse(text) as { credential: string; csrf: string };
    } catch {
      return undefined;
    }
  }
}

function hashOf(id: string): string {
  return createHash("sha256").update(id).digest("hex");
}
