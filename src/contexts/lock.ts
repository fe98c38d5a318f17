/**
 * Per-context readers–writer locks (runtime.md §3: write calls take an exclusive lock, read-only
 * calls a shared one). Writes to one context run one at a time, in arrival order; reads run
 * together but never overlap a write, so a view never sees half of a commit. Waiters are queued
 * FIFO and a waiting writer holds back later readers, so a stream of reads cannot starve it.
 */

interface Waiter {
  write: boolean;
  grant: () => void;
}

class RwLock {
  readers = 0;
  writer = false;
  readonly queue: Waiter[] = [];

  get idle(): boolean {
    return this.readers === 0 && !this.writer && this.queue.length === 0;
  }

  acquire(write: boolean): Promise<void> {
    if (this.queue.length === 0 && !this.writer && (!write || this.readers === 0)) {
      this.take(write);
      return Promise.resolve();
    }
    return new Promise((grant) => this.queue.push({ write, grant }));
  }

  release(write: boolean): void {
    if (write) this.writer = false;
    else this.readers--;
    while (this.queue.length > 0) {
      const head = this.queue[0];
      if (this.writer || (head.write && this.readers > 0)) break;
      this.queue.shift();
      this.take(head.write);
      head.grant();
      if (head.write) break;
    }
  }

  private take(write: boolean): void {
    if (write) this.writer = true;
    else this.readers++;
  }
}

export class ContextLocks {
  private readonly locks = new Map<string, RwLock>();
  /** per context, the count of writers that released its lock, as of the last one (see `stamp`) */
  private readonly stamps = new Map<string, number>();
  private released = 0;

  /** Runs `fn` holding the context's lock: exclusive for writes, shared for reads. */
  async run<T>(contextId: string, write: boolean, fn: () => Promise<T>): Promise<T> {
    let lock = this.locks.get(contextId);
    if (!lock) {
      lock = new RwLock();
      this.locks.set(contextId, lock);
    }
    await lock.acquire(write);
    try {
      return await fn();
    } finally {
      if (write) this.stamps.set(contextId, ++this.released);
      lock.release(write);
      if (lock.idle) this.locks.delete(contextId);
    }
  }

  /**
   * Changes each time a writer releases the context's lock: two equal stamps mean no writer held it
   * in between (read-path.ts commits an outcome computed under the shared lock only then).
   */
  stamp(contextId: string): number {
    return this.stamps.get(contextId) ?? 0;
  }
}
