const encoder = new TextEncoder();

export function utf8Bytes(text: string): number {
  return encoder.encode(text).length;
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
