import { describe, expect, it } from 'vitest';
import type { Space, SyncBackend } from './host-state.ts';
import { STATE_CACHE_BYTES, StateCache } from './state-cache.ts';
import { rowOf } from './protocol.ts';

/** A backend whose `get` answers `v:<key>` (or nothing for keys starting with `-`) and counts asks. */
function backend() {
  const asked: string[] = [];
  const b = {
    hasIndexMeta: false,
    hasBlobs: false,
    get(space: Space, key: Uint8Array) {
      const k = Buffer.from(key).toString();
      asked.push(`${space}:${k}`);
      return k.startsWith('-') ? undefined : new TextEncoder().encode(`v:${k}`);
    },
    range: () => [],
  } as unknown as SyncBackend;
  return { b, asked };
}

const key = (s: string) => new TextEncoder().encode(s);
const text = (v: Uint8Array | undefined) => (v ? Buffer.from(v).toString() : v);

describe('StateCache', () => {
  it('keeps values and absences per context and version, per space', () => {
    const cache = new StateCache();
    const { b, asked } = backend();
    const one = cache.wrap(b, 'c1', 1);
    expect(text(one.get('state', key('a')))).toBe('v:a');
    expect(one.get('state', key('-gone'))).toBeUndefined();
    const again = cache.wrap(b, 'c1', 1);
    expect(text(again.get('state', key('a')))).toBe('v:a');
    expect(again.get('state', key('-gone'))).toBeUndefined();
    expect(text(again.get('private', key('a')))).toBe('v:a'); // another space: asked
    expect(asked).toEqual(['state:a', 'state:-gone', 'private:a']);
    // another context, and a new version of the first, ask again
    cache.wrap(b, 'c2', 1).get('state', key('a'));
    cache.wrap(b, 'c1', 2).get('state', key('a'));
    expect(asked).toHaveLength(5);
    // no version: nothing kept
    cache.wrap(b, 'c3', undefined).get('state', key('a'));
    cache.wrap(b, 'c3', undefined).get('state', key('a'));
    expect(asked).toHaveLength(7);
    // indexMeta reads always ask
    cache.wrap(b, 'c1', 2).get('indexMeta', key('a'));
    cache.wrap(b, 'c1', 2).get('indexMeta', key('a'));
    expect(asked).toHaveLength(9);
  });

  it('stays within its bounds: contexts (least recently used first) and bytes', () => {
    const cache = new StateCache(10_000, 2);
    const { b, asked } = backend();
    cache.wrap(b, 'c1', 1).get('state', key('a'));
    cache.wrap(b, 'c2', 1).get('state', key('a'));
    cache.wrap(b, 'c1', 1).get('state', key('a')); // c1 used last
    cache.wrap(b, 'c3', 1).get('state', key('a')); // drops c2
    expect(cache.size.contexts).toBe(2);
    cache.wrap(b, 'c1', 1).get('state', key('a'));
    cache.wrap(b, 'c2', 1).get('state', key('a'));
    expect(asked.filter((a) => a === 'state:a')).toHaveLength(4); // c1, c2, c3, c2 again
    for (let i = 0; i < 500; i++) cache.wrap(b, 'c1', 1).get('state', key(`k${i}`));
    expect(cache.size.bytes).toBeLessThanOrEqual(10_000);
  });

  it('under a new version keeps only the refreshed rows (values and absences) and reports the rows a call reads', () => {
    const cache = new StateCache();
    const { b, asked } = backend();
    cache.wrap(b, 'c1', 1).get('state', key('a'));
    cache.wrap(b, 'c1', 1).get('state', key('b'));
    const read = { rows: [] as string[], max: 2 };
    const next = cache.wrap(b, 'c1', 2, [['state', key('a'), new TextEncoder().encode('fresh')], ['state', key('-x'), null]], read);
    expect(text(next.get('state', key('a')))).toBe('fresh');
    expect(next.get('state', key('-x'))).toBeUndefined();
    expect(asked).toEqual(['state:a', 'state:b']);
    expect(text(next.get('state', key('b')))).toBe('v:b'); // not refreshed: dropped with the old version, asked again
    next.get('state', key('a'));
    next.get('private', key('c'));
    expect(asked).toEqual(['state:a', 'state:b', 'state:b', 'private:c']);
    expect(read.rows.map((id) => { const [space, k] = rowOf(id); return `${space}:${Buffer.from(k).toString()}`; })).toEqual(['state:a', 'state:-x']); // distinct, at most `max`
  });

  it('carries the context to the new version when it holds the version the refresh starts from, and only then', () => {
    const cache = new StateCache();
    const { b, asked } = backend();
    cache.wrap(b, 'c1', 1).get('state', key('a'));
    cache.wrap(b, 'c1', 1).get('state', key('b'));
    const fresh = new TextEncoder().encode('fresh');
    // version 1 → 2: `a` was written in between (its new value refreshed), `b` was not
    const next = cache.wrap(b, 'c1', 2, [['state', key('a'), fresh]], undefined, 1);
    expect(text(next.get('state', key('a')))).toBe('fresh');
    expect(text(next.get('state', key('b')))).toBe('v:b');
    expect(asked).toEqual(['state:a', 'state:b']); // nothing asked again
    // a carry from a version the cache does not hold (it holds 2) drops the rest, as without one
    const other = cache.wrap(b, 'c1', 4, [['state', key('a'), fresh]], undefined, 3);
    expect(text(other.get('state', key('b')))).toBe('v:b');
    expect(asked).toEqual(['state:a', 'state:b', 'state:b']);
    // no refresh: no carry, whatever `carryFrom` says
    cache.wrap(b, 'c1', 5, undefined, undefined, 4).get('state', key('b'));
    expect(asked).toEqual(['state:a', 'state:b', 'state:b', 'state:b']);
  });
});

describe('StateCache default bound (issue #22: 32 → 8 MiB per worker)', () => {
  it('holds at most STATE_CACHE_BYTES (8 MiB) of keys and values, all contexts together', () => {
    expect(STATE_CACHE_BYTES).toBe(8 * 1024 * 1024);
    const cache = new StateCache();
    const big = new Uint8Array(256 * 1024);
    const inner = { ...backend().b, get: () => big } as SyncBackend;
    // 40 contexts × 2 rows × 256 KiB = 20 MiB asked for
    for (let c = 0; c < 40; c++) {
      const view = cache.wrap(inner, `ctx${c}`, 1);
      view.get('state', key('a'));
      view.get('state', key('b'));
      expect(cache.size.bytes).toBeLessThanOrEqual(STATE_CACHE_BYTES);
    }
    expect(cache.size.bytes).toBeGreaterThan(STATE_CACHE_BYTES - 2 * (256 * 1024 + 100));
    // the oldest contexts went first
    expect(cache.size.contexts).toBeLessThan(40);
  });
});
