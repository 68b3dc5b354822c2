import { LIMITS } from "@aexhq/brain-protocol";

/**
 * Batches wake notifications: the first notify arms one timer of `ms`; later notifies inside
 * the window join it and do not extend it. Commits and acknowledgements are never delayed by this.
 */
export class WakeBatcher {
  private timer: NodeJS.Timeout | undefined;
  constructor(private fire: () => void, private ms: number = LIMITS.wakeBatchMs) {}
  notify(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.fire();
    }, this.ms);
  }
  get pending(): boolean {
    return this.timer !== undefined;
  }
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
