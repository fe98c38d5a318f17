/**
 * Read-through caches over the store (issue #14): records read on every application call (a
 * context's meta and members, the installed applications) are kept in memory instead of read from
 * LevelDB each time. They are invalidated by the store itself — every batch of every writer passes
 * `Store.observe` — so no code path that writes can forget to invalidate, including code written
 * later.
 *
 * A read that overlaps a batch touching its key is answered but not kept: it may have seen either
 * side of the batch. A value is kept only when no batch touching its key started or ended while it
 * was being read, so the cache never holds a value older than the store's.
 */
import type { BatchOp, Store } from './store.ts';

export interface KeyedCacheOptions<T> {
  /** the spaces whose batches can change a cached value */
  spaces: readonly string[];
  /** the cache key an op of those spaces changes (undefined: none) */
  keyOf: (op: BatchOp) => string | undefined;
  /** entries kept at most; the oldest is dropped past it */
  max: number;
  /** copies a value on its way in and out, so callers may change what they get */
  copy?: (value: T) => T;
}

export class KeyedCache<T> {
  private readonly values = new Map<string, T>();
  /** keys with a batch between its start and its end */
  private readonly writing = new Map<string, number>();
  /** keys being read now; `dirty` once a batch touched the key meanwhile */
  private readonly reading = new Map<string, { n: number; dirty: boolean }>();
  private readonly unsubscribe: () => void;

  constructor(
    store: Store,
    private readonly o: KeyedCacheOptions<T>,
  ) {
    const spaces = new Set(o.spaces);
    this.unsubscribe = store.observe((ops, phase) => {
      for (const op of ops) {
        if (!spaces.has(op.space)) continue;
        const key = o.keyOf(op);
        if (key !== undefined) this.touched(key, phase === 'start' ? 1 : -1);
      }
    });
  }

  /** The value of `key`: kept, or loaded with `load` (and kept when no write overlapped). */
  async get(key: string, load: (key: string) => Promise<T>): Promise<T> {
    if (this.values.has(key)) return this.out(this.values.get(key)!);
    let r = this.reading.get(key);
    if (!r) this.reading.set(key, (r = { n: 0, dirty: false }));
    r.n++;
    try {
      const value = await load(key);
      if (!r.dirty && !this.writing.has(key)) {
        if (this.values.size >= this.o.max) this.values.delete(this.values.keys().next().value!);
        this.values.set(key, this.o.copy ? this.o.copy(value) : value);
      }
      return value;
    } finally {
      if (--r.n === 0) this.reading.delete(key);
    }
  }

  /**
   * The value of `key` when it is kept, as `get` would answer it, without waiting (issue #33: a
   * call's lookups of records it finds kept need not each cost a promise); undefined when it is
   * not kept, and `get` must load it.
   */
  peek(key: string): { value: T } | undefined {
    return this.values.has(key) ? { value: this.out(this.values.get(key)!) } : undefined;
  }

  /** Forgets everything (and stops observing the store). */
  close(): void {
    this.unsubscribe();
    this.values.clear();
  }

  get size(): number {
    return this.values.size;
  }

  private out(value: T): T {
    return this.o.copy ? this.o.copy(value) : value;
  }

  private touched(key: string, delta: 1 | -1): void {
    this.values.delete(key);
    const r = this.reading.get(key);
    if (r) r.dirty = true;
    const n = (this.writing.get(key) ?? 0) + delta;
    if (n > 0) this.writing.set(key, n);
    else this.writing.delete(key);
  }
}
