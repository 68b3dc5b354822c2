/**
 * Registry writes started by synchronous methods (a key issued, a host registered): the change is
 * in memory at once, and whoever answers for it awaits `settled` before saying it is stored.
 */
export class PendingWrites {
  private writes = new Set<Promise<void>>();

  add(write: Promise<void>): void {
    const tracked = write.finally(() => this.writes.delete(tracked));
    tracked.catch(() => {
      // Handled: `settled` rejects with it, and the answer that awaits it carries the failure.
    });
    this.writes.add(tracked);
  }

  /** Resolves once every write started so far is stored; rejects with the first that failed. */
  async settled(): Promise<void> {
    await Promise.all([...this.writes]);
  }
}
