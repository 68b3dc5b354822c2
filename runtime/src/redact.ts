/** Secrets shorter than this are not redacted: they would match ordinary text. */
export const MIN_SECRET_LENGTH = 8;
export const REDACTED = "[redacted]";

/**
 * Removes the server's secrets (the operator token, provider API keys, descriptor-Environment header
 * values, host secrets and API keys it has seen) from anything it journals, returns or logs: a
 * provider or an endpoint may echo the request headers it received in an error body or a result.
 * Copy on write: a value without a secret is returned as it is, so the common case allocates nothing.
 */
export class Redactor {
  private secrets: string[] = [];
  /** The shortest secret's length: a shorter string (most keys and values) cannot hold one. */
  private shortest = Infinity;

  /** Adds a secret; for `Scheme value` header values (Bearer, Basic, ...) the value alone too. */
  add(secret: string | undefined): void {
    if (secret === undefined) return;
    let added = false;
    for (const s of [secret, secret.replace(/^[A-Za-z-]+\s+/, "")]) {
      if (s.length >= MIN_SECRET_LENGTH && !this.secrets.includes(s)) added = this.secrets.push(s) > 0;
    }
    // Longest first, so a secret that contains another is replaced whole. Every request with a
    // known key comes through here, so nothing is done for a secret already held.
    if (added) {
      this.secrets.sort((a, b) => b.length - a.length);
      this.shortest = this.secrets[this.secrets.length - 1]!.length;
    }
  }

  get size(): number {
    return this.secrets.length;
  }

  text(s: string): string {
    if (s.length < this.shortest) return s;
    let out = s;
    for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  }

  /** `value` with every string (values and keys) redacted; the same object when nothing was found. */
  redact<T>(value: T): T {
    if (this.secrets.length === 0) return value;
    return this.walk(value, false) as T;
  }

  /**
   * `redact` for a journal record's data, every object and array of the result frozen on the way,
   * as the journal freezes a record (journal/freeze.ts, which then finds the data frozen): one walk
   * of the data instead of two. Parts already frozen are read for secrets all the same (one may
   * have been added since). Undefined while there is no secret: the journal's own freeze then walks it.
   */
  redactFrozen<T>(value: T): T | undefined {
    if (this.secrets.length === 0) return undefined;
    return this.walk(value, true) as T;
  }

  private walk(value: unknown, freeze: boolean): unknown {
    if (typeof value === "string") return this.text(value);
    if (value === null || typeof value !== "object") return value;
    // Every journaled record passes through here: plain loops, no entry arrays or closures.
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const v: unknown = value[i];
        const r = this.walk(v, freeze);
        if (r !== v) (copy ??= [...value])[i] = r;
      }
      const out = copy ?? value;
      if (freeze) Object.freeze(out);
      return out;
    }
    let copy: Record<string, unknown> | undefined;
    const object = value as Record<string, unknown>;
    for (const k in object) {
      if (!Object.hasOwn(object, k)) continue;
      const v = object[k];
      const rk = this.text(k);
      const rv = this.walk(v, freeze);
      if (rk !== k || rv !== v) {
        copy ??= { ...object };
        if (rk !== k) delete copy[k];
        copy[rk] = rv;
      }
    }
    const out = copy ?? object;
    if (freeze) Object.freeze(out);
    return out;
  }
}
