/**
 * classic-level (LevelDB) implementation of the store interface. One database in the node home's
 * data directory; each space is a sublevel, and batches across spaces go through the root database
 * so they are written atomically (LevelDB write batches are all-or-nothing, also across a kill -9).
 */
import { ClassicLevel } from 'classic-level';
import type { BatchOp, Codec, IterateOptions, Space, Store } from './store.ts';
import { assertSpaceName } from './store.ts';
import { decodeValue, encodeValue } from './codec.ts';

/** The part of a sublevel this store uses (the library's generics do not survive sublevel typing). */
interface Sub {
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, value: Uint8Array): Promise<void>;
  del(key: string): Promise<void>;
  iterator(range: Record<string, unknown>): AsyncIterable<[string, Uint8Array]>;
}

export class LevelStore implements Store {
  private readonly db: ClassicLevel<string, Uint8Array>;
  private readonly subs = new Map<string, { sub: Sub; codec: Codec }>();

  constructor(readonly location: string) {
    this.db = new ClassicLevel<string, Uint8Array>(location, { keyEncoding: 'utf8', valueEncoding: 'view' });
  }

  async open(): Promise<void> {
    await this.db.open();
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  async ping(): Promise<boolean> {
    try {
      await this.db.get('\u0000ping');
      return this.db.status === 'open';
    } catch {
      return false;
    }
  }

  space<T>(name: string, codec: Codec = 'json'): Space<T> {
    assertSpaceName(name);
    const sub = this.subOf(name, codec);
    const store = this;
    return {
      name,
      async get(key) {
        const raw = await sub.get(key);
        return raw === undefined ? undefined : decodeValue<T>(codec, raw);
      },
      async put(key, value) {
        await sub.put(key, encodeValue(codec, value));
      },
      async del(key) {
        await sub.del(key);
      },
      entries(opts?: IterateOptions) {
        return store.iterate<T>(sub, codec, opts ?? {});
      },
      putOp: (key, value) => ({ type: 'put', space: name, key, value }),
      delOp: (key) => ({ type: 'del', space: name, key }),
    };
  }

  async batch(ops: BatchOp[]): Promise<void> {
    if (ops.length === 0) return;
    const chained = ops.map((op) => {
      const entry = this.subs.get(op.space);
      if (!entry) throw new Error(`unknown store space: ${op.space}`);
      return op.type === 'put'
        ? { type: 'put' as const, sublevel: entry.sub, key: op.key, value: encodeValue(entry.codec, op.value) }
        : { type: 'del' as const, sublevel: entry.sub, key: op.key };
    });
    await this.db.batch(chained as never);
  }

  private subOf(name: string, codec: Codec): Sub {
    const existing = this.subs.get(name);
    if (existing) return existing.sub;
    const sub = this.db.sublevel<string, Uint8Array>(name, { keyEncoding: 'utf8', valueEncoding: 'view' }) as unknown as Sub;
    this.subs.set(name, { sub, codec });
    return sub;
  }

  private async *iterate<T>(sub: Sub, codec: Codec, opts: IterateOptions): AsyncIterable<[string, T]> {
    const range: Record<string, unknown> = { reverse: opts.reverse ?? false };
    if (opts.limit !== undefined) range.limit = opts.limit;
    const prefix = opts.prefix ?? '';
    const upper = prefix + '\uffff';
    range.gte = prefix;
    range.lt = upper;
    if (opts.after !== undefined) {
      // paging cursor: narrow the bound on the side we are walking away from
      if (opts.reverse) range.lt = opts.after < upper ? opts.after : upper;
      else if (opts.after >= prefix) {
        delete range.gte;
        range.gt = opts.after;
      }
    }
    for await (const [key, raw] of sub.iterator(range)) {
      yield [key, decodeValue<T>(codec, raw)];
    }
  }
}
