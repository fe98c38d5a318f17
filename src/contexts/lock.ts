/**
 * Per-context readers–writer locks (runtime.md §3: write calls take an exclusive lock, read-only
 * calls a shared one). Writes to one context run one at a time, in arrival order; reads run
 * together but never overlap a write, so a view never sees half of a commit. Waiters are queued
 * FIFO and a waiting writer holds back later readers, so a stream of reads cannot starve it. A
 * waiter whose caller went away (its AbortSignal) leaves the queue (issue #23 §4: it no longer
 * holds a pending place until its turn).
 */
import { onAbort } from '../abort-watch.ts';

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

  /** Takes the lock now when it is free for this kind (true), or leaves it as it is (false). */
  tryAcquire(write: boolean): boolean {
    if (this.queue.length > 0 || this.writer || (write && this.readers > 0)) return false;
    this.take(write);
    return true;
  }

  acquire(write: boolean, signal?: AbortSignal): Promise<void> {
    if (this.tryAcquire(write)) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(new LockWaitAborted());
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        write,
        grant: () => {
          unwatch?.();
          resolve();
        },
      };
      const unwatch =
        signal &&
        onAbort(signal, () => {
          const i = this.queue.indexOf(waiter);
          if (i < 0) return;
          this.queue.splice(i, 1);
          // a writer leaving the head of the queue may let the readers behind it in
          this.pump();
          reject(new LockWaitAborted());
        });
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
  run<T>(contextId: string, write: boolean, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    let lock = this.locks.get(contextId);
    if (!lock) {
      lock = new RwLock();
      this.locks.set(contextId, lock);
    }
    // a free lock is taken at once: no promise to wait on (issue #33, the common case of a read)
    if (lock.tryAcquire(write)) return this.holding(contextId, lock, write, fn);
    const held = lock;
    return held.acquire(write, signal).then(
      () => this.holding(contextId, held, write, fn),
      (err: unknown) => {
        if (held.idle && this.locks.get(contextId) === held) this.locks.delete(contextId);
        throw err;
      },
    );
  }

  /** Runs `fn` on the lock taken, and releases it once `fn` settles (or throws). */
  private holding<T>(contextId: string, lock: RwLock, write: boolean, fn: () => Promise<T>): Promise<T> {
    const release = () => {
      if (write) this.stamps.set(contextId, ++this.released);
      lock.release(write);
      if (lock.idle) this.locks.delete(contextId);
    };
    let running: Promise<T>;
    try {
      running = fn();
    } catch (err) {
      release();
      return Promise.reject(err);
    }
    return running.then(
      (value) => {
        release();
        return value;
      },
      (err: unknown) => {
        release();
        throw err;
      },
    );
  }

  /**
   * Changes each time a writer releases the context's lock: two equal stamps mean no writer held it
   * in between (read-path.ts commits an outcome computed under the shared lock only then).
   */
  stamp(contextId: string): number {
    return this.stamps.get(contextId) ?? 0;
  }
}
