/**
 * Per-context readers–writer locks (runtime.md §3: write calls take an exclusive lock, read-only
 * calls a shared one). Writes to one context run one at a time, in arrival order; reads run
 * together but never overlap a write, so a view never sees half of a commit. Waiters are queued
 * FIFO and a waiting writer holds back later readers, so a stream of reads cannot starve it. A
 * waiter whose caller went away (its AbortSignal) leaves the queue (issue #23 §4: it no longer
 * holds a pending place until its turn).
 */

/** The caller went away while waiting for the lock: nothing ran. */
export class LockWaitAborted extends Error {
  override name = 'LockWaitAborted';
  constructor() {
    super('execution aborted while waiting for the context');
  }
}

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

  acquire(write: boolean, signal?: AbortSignal): Promise<void> {
    if (this.queue.length === 0 && !this.writer && (!write || this.readers === 0)) {
      this.take(write);
      return Promise.resolve();
    }
    if (signal?.aborted) return Promise.reject(new LockWaitAborted());
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const i = this.queue.indexOf(waiter);
        if (i < 0) return;
        this.queue.splice(i, 1);
        // a writer leaving the head of the queue may let the readers behind it in
        this.pump();
        reject(new LockWaitAborted());
      };
      const waiter: Waiter = {
        write,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
    });
  }

  release(write: boolean): void {
    if (write) this.writer = false;
    else this.readers--;
    this.pump();
  }

  private pump(): void {
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

  /**
   * Runs `fn` holding the context's lock: exclusive for writes, shared for reads. When `signal`
   * aborts while the call waits (its client went away), it leaves the queue and rejects with
   * {@link LockWaitAborted}; `fn` never runs.
   */
  async run<T>(contextId: string, write: boolean, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    let lock = this.locks.get(contextId);
    if (!lock) {
      lock = new RwLock();
      this.locks.set(contextId, lock);
    }
    try {
      await lock.acquire(write, signal);
    } catch (err) {
      if (lock.idle && this.locks.get(contextId) === lock) this.locks.delete(contextId);
      throw err;
    }
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
