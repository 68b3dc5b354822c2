/** UTF-8 length without encoding into a new buffer (this is on every emission's path). */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** BRAIN_MAX_EMITTED_BYTES for one activation, shared by every call it started (also after it returned). */
export class EmissionBudget {
  used = 0;
  constructor(readonly max: number) {}
  /** Charges `bytes` if they fit; otherwise charges nothing and returns false. */
  take(bytes: number): boolean {
    if (this.used + bytes > this.max) return false;
    this.used += bytes;
    return true;
  }
}
