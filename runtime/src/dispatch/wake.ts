import { LIMITS } from "@aexhq/brain-protocol";

/**
 * Batches wake notifications: the first notify arms one timer of `ms`; later notifies inside
 * the window join it and do not extend it. Commits and acknowledgements are never delayed by this.
 *
 * One Timeout per batcher, re-armed with `refresh()` once it has fired: a session whose calls
 * outlast the window (a PostgreSQL node's wait for two commits) opens a window per call, and a new
 * Timeout and closure each time were garbage made per call.
 */
export class WakeBatcher {
  private timer: NodeJS.Timeout | undefined;
  private armed = false;
  private readonly onTimeout = (): void => {
    this.armed = false;
    this.fire();
  };
  constructor(private fire: () => void, private ms: number = LIMITS.wakeBatchMs) {}
  notify(): void {
    if (this.armed) return;
    this.armed = true;
    // refresh() re-arms a Timeout that has fired (Node documents it); after stop() a new one is made.
    if (this.timer === undefined) this.timer = setTimeout(this.onTimeout, this.ms);
    else this.timer.refresh();
  }
  get pending(): boolean {
    return this.armed;
  }
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.armed = false;
  }
}
