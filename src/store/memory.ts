/**
 * In-memory store with the same semantics as the LevelDB one (ordered keys, atomic batches).
 * Used by unit tests and by `--ephemeral` development nodes.
 */
import type { BatchObserver, BatchOp, Codec, IterateOptions, Space, Store, StoreHealth } from './store.ts';
import { assertSpaceName, BatchObservers } from './store.ts';
import { decodeValue, encodeValue } from './codec.ts';

export class MemoryStore implements Store {
  private readonly data = new Map<string, Uint8Array>();
  private readonly codecs = new Map<string, Codec>();
  private readonly observers = new BatchObservers();
  private closed = false;

  async open(): Promise<void> {
    this.closed = false;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  async ping(): Promise<boolean> {
    return !this.closed;
  }

  async health(): Promise<StoreHealth> {
    return this.status();
  }

  status(): StoreHealth {
    return this.closed ? { ok: false, reason: 'the store is closed' } : { ok: true };
  }

  space<T>(name: string, codec: Codec = 'json'): Space<T> {
    assertSpaceName(name);
    this.codecs.set(name, codec);
    const full = (k: string) => `${name}!${k}`;
    const store = this;
    return {
      name,
      async get(key) {
        store.check();
        const raw = store.data.get(full(key));
        return raw === undefined ? undefined : decodeValue<T>(codec, raw);
      },
      async put(key, value) {
        await store.batch([{ type: 'put', space: name, key, value }]);
      },
      async del(key) {
        await store.batch([{ type: 'del', space: name, key }]);
      },
      entries(opts?: IterateOptions) {
        return store.iterate<T>(name, codec, opts ?? {});
      },
      putOp: (key, value) => ({ type: 'put', space: name, key, value }),
      delOp: (key) => ({ type: 'del', space: name, key }),
    };
  }

  async batch(ops: BatchOp[]): Promise<void> {
    this.check();
    // encode everything first so a bad value aborts the whole batch before anything is applied
    const staged = ops.map((op) =>
      op.type === 'put'
        ? ([`${op.space}!${op.key}`, encodeValue(this.codecs.get(op.space) ?? 'json', op.value)] as const)
        : ([`${op.space}!${op.key}`, undefined] as const),
    );
    this.observers.tell(ops, 'start');
    for (const [k, v] of staged) {
      if (v === undefined) this.data.delete(k);
      else this.data.set(k, v);
    }
    this.observers.tell(ops, 'end');
  }

  observe(observer: BatchObserver): () => void {
    return this.observers.add(observer);
  }

  private async *iterate<T>(space: string, codec: Codec, opts: IterateOptions): AsyncIterable<[string, T]> {
    this.check();
    const base = `${space}!`;
    const prefix = base + (opts.prefix ?? '');
    const keys = [...this.data.keys()].filter((k) => k.startsWith(prefix)).sort();
    if (opts.reverse) keys.reverse();
    let n = 0;
    for (const k of keys) {
      const key = k.slice(base.length);
      if (opts.after !== undefined && (opts.reverse ? key >= opts.after : key <= opts.after)) continue;
      if (opts.limit !== undefined && n >= opts.limit) return;
      const raw = this.data.get(k);
      if (raw === undefined) continue;
      n++;
      yield [key, decodeValue<T>(codec, raw)];
    }
  }

  private check(): void {
    if (this.closed) throw new Error('store is closed');
  }
}
