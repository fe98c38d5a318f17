/** The main thread's record of what a worker's cache holds per context (hot-rows.ts). */
import { describe, expect, it } from 'vitest';
import type { CallResult } from './call-types.ts';
import type { Space } from './host-state.ts';
import { HotRows } from './hot-rows.ts';
import { rowId, rowOf } from './protocol.ts';

const k = (s: string) => new TextEncoder().encode(s);
const names = (stale: { rows: Array<[string, Uint8Array]> } | undefined) => stale?.rows.map(([space, key]) => `${space}:${new TextDecoder().decode(key)}`);
/** the worker sends the ids of the rows a call read (protocol.ts) */
const note = (h: HotRows, c: string, v: number | undefined, rows: Array<[Space, Uint8Array]>, res: CallResult) => h.note(c, v, rows.map(([space, key]) => rowId(space, key)), res);
const failed: CallResult = { ok: false, kind: 'WasmTrap', message: 'x', logs: [] };
const wrote = (keys: string[]): CallResult => ({
  ok: true, output: null, logs: [], events: [], writes: keys.map((key) => [k(key), k('v')] as [Uint8Array, Uint8Array]),
  privateWrites: [[k('p'), null]], indexWrites: [], indexMetaWrites: [], commit: null, xcalls: [],
} as unknown as CallResult);

describe('HotRows', () => {
  it('asks for nothing under the same version or without one, and for the known rows once the version moved', () => {
    const h = new HotRows();
    expect(h.stale('c', 1)).toBeUndefined(); // never ran here
    note(h, 'c', 1, [['state', k('a')], ['state', k('b')], ['state', k('a')]], failed);
    expect(h.has('c')).toBe(true);
    expect(h.stale('c', 1)).toBeUndefined();
    expect(h.stale('c', undefined)).toBeUndefined();
    expect(names(h.stale('c', 2))).toEqual(['state:b', 'state:a']); // each row once, the last touched last
    note(h, 'd', undefined, [['state', k('a')]], failed); // no version: nothing kept
    expect(h.has('d')).toBe(false);
  });

  it('adds a call\'s reads and (when it succeeded) its writes as the most recent rows, keeps earlier rows of the same version, drops them under another', () => {
    const h = new HotRows();
    note(h, 'c', 1, [['state', k('a')]], failed);
    note(h, 'c', 1, [['state', k('b')]], wrote(['w']));
    expect(names(h.stale('c', 2))).toEqual(['state:a', 'state:b', 'state:w', 'private:p']);
    note(h, 'c', 1, [['state', k('a')], ['state', k('b')]], failed); // all known: moved to the end, nothing added
    expect(names(h.stale('c', 2))).toEqual(['state:w', 'private:p', 'state:a', 'state:b']);
    note(h, 'c', 2, [['index', k('x')]], failed); // a new version: the earlier rows go
    expect(names(h.stale('c', 3))).toEqual(['index:x']);
    // the same bytes in another space are another row; bytes that are not UTF-8 stay distinct
    note(h, 'c', 2, [['state', k('x')], ['state', Uint8Array.of(0xff)], ['state', Uint8Array.of(0xfe)]], failed);
    expect(h.stale('c', 3)?.rows).toHaveLength(4);
    expect(h.stale('c', 3)?.rows).toContainEqual(['state', Uint8Array.of(0xff)]); // the key's bytes come back exact
  });

  it('with the store\'s journal, asks only for the rows written since the worker\'s version and carries the rest; without an answer, as before', () => {
    const h = new HotRows(3);
    note(h, 'c', 1, [['state', k('a')], ['state', k('b')]], failed);
    const asked: number[] = [];
    const journal = (rows: Array<['state' | 'private' | 'index', Uint8Array]> | undefined) => (since: number) => (asked.push(since), rows);
    const carried = h.stale('c', 4, journal([['state', k('w')]]));
    expect(asked).toEqual([1]); // from the version the worker's cache holds
    expect(carried?.carry).toBe(1);
    expect(names(carried)).toEqual(['state:w']); // a row the worker never read, written since: sent too
    expect(h.stale('c', 1, journal([]))).toBeUndefined(); // same version: nothing asked
    expect(asked).toEqual([1]);
    // the journal no longer reaches back, or names more rows than are sent at most: the worker's rows, no carry
    for (const answer of [undefined, ['a', 'b', 'c', 'd'].map((s) => ['state', k(s)] as ['state', Uint8Array])]) {
      const fallback = h.stale('c', 4, journal(answer));
      expect(fallback?.carry).toBeUndefined();
      expect(names(fallback)).toEqual(['state:a', 'state:b']);
    }
  });

  it('ids keep a key exactly, whatever its bytes', () => {
    const key = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(rowOf(rowId('private', key))).toEqual(['private', key]);
    expect(rowOf(rowId('index', new Uint8Array()))).toEqual(['index', new Uint8Array()]);
    expect(rowId('state', key.subarray(10, 12))).toBe(rowId('state', Uint8Array.of(10, 11)));
  });

  it('is bounded in rows per context and in contexts (least recently used goes)', () => {
    const h = new HotRows(3, 2);
    note(h, 'c', 1, ['a', 'b', 'c', 'd'].map((s) => ['state', k(s)] as ['state', Uint8Array]), failed);
    expect(names(h.stale('c', 2))).toEqual(['state:b', 'state:c', 'state:d']); // the least recent went
    note(h, 'c', 1, [['state', k('c')], ['state', k('e')]], failed);
    expect(names(h.stale('c', 2))).toEqual(['state:d', 'state:c', 'state:e']);
    note(h, 'd', 1, [], failed);
    note(h, 'c', 1, [['state', k('e')]], failed); // c used again: d is the oldest
    note(h, 'e', 1, [], failed);
    expect([h.has('c'), h.has('d'), h.has('e')]).toEqual([true, false, true]);
  });
});
