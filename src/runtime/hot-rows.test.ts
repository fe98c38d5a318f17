/** The main thread's record of what a worker's cache holds per context (hot-rows.ts). */
import { describe, expect, it } from 'vitest';
import type { CallResult } from './call-types.ts';
import { HotRows } from './hot-rows.ts';

const k = (s: string) => new TextEncoder().encode(s);
const names = (rows: Array<[string, Uint8Array]> | undefined) => rows?.map(([space, key]) => `${space}:${new TextDecoder().decode(key)}`);
const failed: CallResult = { ok: false, kind: 'WasmTrap', message: 'x', logs: [] };
const wrote = (keys: string[]): CallResult => ({
  ok: true, output: null, logs: [], events: [], writes: keys.map((key) => [k(key), k('v')] as [Uint8Array, Uint8Array]),
  privateWrites: [[k('p'), null]], indexWrites: [], indexMetaWrites: [], commit: null, xcalls: [],
} as unknown as CallResult);

describe('HotRows', () => {
  it('asks for nothing under the same version or without one, and for the known rows once the version moved', () => {
    const h = new HotRows();
    expect(h.stale('c', 1)).toBeUndefined(); // never ran here
    h.note('c', 1, [['state', k('a')], ['state', k('b')], ['state', k('a')]], failed);
    expect(h.has('c')).toBe(true);
    expect(h.stale('c', 1)).toBeUndefined();
    expect(h.stale('c', undefined)).toBeUndefined();
    expect(names(h.stale('c', 2))).toEqual(['state:b', 'state:a']); // each row once, the last touched last
    h.note('d', undefined, [['state', k('a')]], failed); // no version: nothing kept
    expect(h.has('d')).toBe(false);
  });

  it('adds a call\'s reads and (when it succeeded) its writes as the most recent rows, keeps earlier rows of the same version, drops them under another', () => {
    const h = new HotRows();
    h.note('c', 1, [['state', k('a')]], failed);
    h.note('c', 1, [['state', k('b')]], wrote(['w']));
    expect(names(h.stale('c', 2))).toEqual(['state:a', 'state:b', 'state:w', 'private:p']);
    h.note('c', 1, [['state', k('a')], ['state', k('b')]], failed); // all known: moved to the end, nothing added
    expect(names(h.stale('c', 2))).toEqual(['state:w', 'private:p', 'state:a', 'state:b']);
    h.note('c', 2, [['index', k('x')]], failed); // a new version: the earlier rows go
    expect(names(h.stale('c', 3))).toEqual(['index:x']);
    // the same bytes in another space are another row; bytes that are not UTF-8 stay distinct
    h.note('c', 2, [['state', k('x')], ['state', Uint8Array.of(0xff)], ['state', Uint8Array.of(0xfe)]], failed);
    expect(h.stale('c', 3)).toHaveLength(4);
  });

  it('is bounded in rows per context and in contexts (least recently used goes)', () => {
    const h = new HotRows(3, 2);
    h.note('c', 1, ['a', 'b', 'c', 'd'].map((s) => ['state', k(s)] as ['state', Uint8Array]), failed);
    expect(names(h.stale('c', 2))).toEqual(['state:b', 'state:c', 'state:d']); // the least recent went
    h.note('c', 1, [['state', k('c')], ['state', k('e')]], failed);
    expect(names(h.stale('c', 2))).toEqual(['state:d', 'state:c', 'state:e']);
    h.note('d', 1, [], failed);
    h.note('c', 1, [['state', k('e')]], failed); // c used again: d is the oldest
    h.note('e', 1, [], failed);
    expect([h.has('c'), h.has('d'), h.has('e')]).toEqual([true, false, true]);
  });
});
