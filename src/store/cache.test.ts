import { describe, expect, it } from 'vitest';
import { KeyedCache } from './cache.ts';
import { MemoryStore } from './memory.ts';
import type { BatchObserver, BatchOp, Store } from './store.ts';

/** A store whose batches' phases the test tells by hand. */
function handStore() {
  let observer: BatchObserver = () => undefined;
  const store = { observe: (o: BatchObserver) => ((observer = o), () => undefined) } as unknown as Store;
  return { store, tell: (ops: BatchOp[], phase: 'start' | 'end') => observer(ops, phase) };
}

const put = (key: string): BatchOp => ({ type: 'put', space: 'things', key, value: 1 });

describe('KeyedCache', () => {
  it('answers a kept value without loading, and loads again after a batch changed its key', async () => {
    const store = new MemoryStore();
    await store.open();
    const space = store.space<{ n: number }>('things');
    await space.put('a', { n: 1 });
    let loads = 0;
    const cache = new KeyedCache<{ n: number } | undefined>(store, { spaces: ['things'], keyOf: (op) => op.key, max: 10 });
    const load = (k: string) => (loads++, space.get(k));
    expect(await cache.get('a', load)).toEqual({ n: 1 });
    expect(await cache.get('a', load)).toEqual({ n: 1 });
    expect(loads).toBe(1);
    await store.batch([space.putOp('a', { n: 2 }), { type: 'put', space: 'other', key: 'a', value: 0 }]);
    expect(await cache.get('a', load)).toEqual({ n: 2 });
    expect(loads).toBe(2);
    await space.put('b', { n: 9 }); // another key: 'a' stays
    await cache.get('a', load);
    expect(loads).toBe(2);
  });

  it('does not keep a value read while a batch touching its key was in flight', async () => {
    const { store, tell } = handStore();
    const cache = new KeyedCache<number>(store, { spaces: ['things'], keyOf: (op) => op.key, max: 10 });
    let loads = 0;
    let release!: () => void;
    // a load that overlaps the end of a batch
    tell([put('k')], 'start');
    const slow = cache.get('k', async () => {
      loads++;
      await new Promise<void>((r) => (release = r));
      return 1;
    });
    await Promise.resolve();
    tell([put('k')], 'end');
    release();
    expect(await slow).toBe(1);
    expect(await cache.get('k', async () => (loads++, 2))).toBe(2);
    expect(loads).toBe(2);
    // a load that starts and ends inside a batch
    tell([put('k')], 'start');
    expect(await cache.get('k', async () => (loads++, 3))).toBe(3);
    tell([put('k')], 'end');
    expect(await cache.get('k', async () => (loads++, 4))).toBe(4);
    expect(await cache.get('k', async () => (loads++, 5))).toBe(4);
    expect(loads).toBe(4);
  });

  it('hands out copies when told how, and keeps at most `max` entries', async () => {
    const { store } = handStore();
    const cache = new KeyedCache<{ list: number[] }>(store, { spaces: ['things'], keyOf: (op) => op.key, max: 2, copy: (v) => ({ list: [...v.list] }) });
    const first = await cache.get('a', async () => ({ list: [1] }));
    first.list.push(2);
    expect(await cache.get('a', async () => ({ list: [] }))).toEqual({ list: [1] });
    await cache.get('b', async () => ({ list: [] }));
    await cache.get('c', async () => ({ list: [] }));
    expect(cache.size).toBe(2);
  });

  it('peeks at what get would answer from memory, a copy, and at nothing once a batch touched the key', async () => {
    const { store, tell } = handStore();
    const cache = new KeyedCache<{ list: number[] } | undefined>(store, { spaces: ['things'], keyOf: (op) => op.key, max: 10, copy: (v) => v && { list: [...v.list] } });
    expect(cache.peek('a')).toBeUndefined();
    await cache.get('a', async () => ({ list: [1] }));
    await cache.get('gone', async () => undefined);
    const seen = cache.peek('a')!;
    expect(seen).toEqual({ value: { list: [1] } });
    seen.value!.list.push(2);
    expect(cache.peek('a')).toEqual({ value: { list: [1] } });
    expect(cache.peek('gone')).toEqual({ value: undefined }); // kept as absent: not the same as not kept
    tell([put('a')], 'start');
    expect(cache.peek('a')).toBeUndefined();
    tell([put('a')], 'end');
    expect(cache.peek('a')).toBeUndefined();
    expect(cache.peek('gone')).toEqual({ value: undefined });
  });
});
