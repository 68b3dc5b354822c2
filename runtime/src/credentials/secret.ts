import { randomBytes, scryptSync, timingSafeEqual, createHash } from "node:crypto";

/** scrypt with a per-host salt: only the hash is stored, never the secret. */
export function hashSecret(secret: string, salt = randomBytes(16).toString("hex")): { salt: string; hash: string } {
  return { salt, hash: scryptSync(secret, salt, 32).toString("hex") };
}

export function verifySecret(secret: string, salt: string, hash: string): boolean {
  const candidate = scryptSync(secret, salt, 32);
  const stored = Buffer.from(hash, "hex");
  return stored.length === candidate.length && timingSafeEqual(candidate, stored);
}

/** Constant-time token comparison; hashing first makes both sides the same length. */
export function tokensEqual(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
