import { randomBytes } from "node:crypto";

/**
 * Session ids that sort as they were made on this node: `ses_` + 12 hex digits of the millisecond
 * + 12 of a 48-bit number that starts random each millisecond and counts up within it.
 *
 * Why: GET /v1/sessions lists newest first by (creation time, id), and creation times are whole
 * milliseconds. With fully random ids, two sessions created one after the other in the same
 * millisecond came back in either order. The random part keeps ids made on different nodes in the
 * same millisecond apart (48 bits); ids stay opaque to clients.
 */
export class SessionIds {
  private lastMs = 0;
  private counter = 0;

  constructor(private readonly clock: () => number = Date.now) {}

  next(): string {
    // A clock that steps back keeps the last millisecond, so ids never go backwards on one node.
    const now = Math.max(this.clock(), this.lastMs);
    if (now === this.lastMs && this.counter < MAX_COUNTER) this.counter++;
    else {
      this.lastMs = now === this.lastMs ? now + 1 : now;
      // Below 2^47, so a millisecond has at least 2^47 increments left before it could overflow.
      this.counter = randomBytes(6).readUIntBE(0, 6) % 2 ** 47;
    }
    return `ses_${this.lastMs.toString(16).padStart(12, "0")}${this.counter.toString(16).padStart(12, "0")}`;
  }
}

const MAX_COUNTER = 2 ** 48 - 1;
