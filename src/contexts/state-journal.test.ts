/** Which rows of a context each state version move wrote (state-journal.ts). */
import { describe, expect, it } from 'vitest';
import type { BatchOp } from '../store/store.ts';
import { StateJournal } from './state-journal.ts';

const put = (space: string, key: string): BatchOp => ({ type: 'put', space, key, value: new Uint8Array() });
const del = (space: string, key: string): BatchOp => ({ type: 'del', space, key });
const names = (rows: ReturnType<StateJournal['changedSince']>) => rows?.map(([space, key]) => `${space}:${Buffer.from(key).toString('hex')}`).sort();

describe('StateJournal', () => {
  it('moves a context once per batch that writes its rows, and names the rows written since a version', () => {
    const j = new StateJournal();
    expect(j.version('c1')).toBe(0);
    j.record([put('ctx.state', 'c1/aa'), put('ctx.private', 'c1/bb'), del('ctx.index', 'c1/cc'), put('ctx.meta', 'c1'), put('ctx.state', 'c2/aa')]);
    const v1 = j.version('c1');
    expect(v1).toBeGreaterThan(0);
    expect(j.version('c2')).toBeGreaterThan(0);
    expect(j.version('c2')).not.toBe(v1);
    expect(names(j.changedSince('c1', 0))).toEqual(['index:cc', 'private:bb', 'state:aa']);
    expect(j.changedSince('c1', v1)).toEqual([]);
    j.record([put('ctx.meta', 'c1'), put('ctx.deltas', 'c1/x')]); // no state row: no move
    expect(j.version('c1')).toBe(v1);
    j.record([put('ctx.state', 'c1/aa'), put('ctx.state', 'c1/dd')]);
    j.record([put('ctx.state', 'c1/dd')]);
    expect(names(j.changedSince('c1', v1))).toEqual(['state:aa', 'state:dd']); // each row once
    expect(names(j.changedSince('c1', 0))).toEqual(['index:cc', 'private:bb', 'state:aa', 'state:dd']);
    expect(j.changedSince('c3', 0)).toEqual([]); // never written: nothing changed
  });

  it('answers undefined once it does not reach back to the version, or a move between wrote too many rows', () => {
    const j = new StateJournal();
    j.record([put('ctx.state', 'c/01')]);
    const first = j.version('c');
    for (let i = 0; i < 16; i++) j.record([put('ctx.state', `c/${i.toString(16).padStart(2, '0')}`)]);
    expect(j.changedSince('c', first)).toHaveLength(16); // 16 moves after it are kept
    expect(j.changedSince('c', 0)).toBeUndefined(); // the first move went
    const before = j.version('c');
    j.record(Array.from({ length: 257 }, (_, i) => put('ctx.state', `c/${i.toString(16).padStart(4, '0')}`)));
    const after = j.version('c');
    j.record([put('ctx.state', 'c/ff')]);
    expect(j.changedSince('c', before)).toBeUndefined();
    expect(names(j.changedSince('c', after))).toEqual(['state:ff']);
  });

  it('forgets the least recently written contexts past its bound; their later moves are known from then on', () => {
    const j = new StateJournal();
    j.record([put('ctx.state', 'old/aa')]);
    const old = j.version('old');
    for (let i = 0; i < 1_024; i++) j.record([put('ctx.state', `x${i}/aa`)]);
    expect(j.changedSince('old', old)).toEqual([]); // the version has not moved: nothing changed
    j.record([put('ctx.state', 'old/bb')]);
    expect(j.changedSince('old', old)).toEqual([['state', Uint8Array.of(0xbb)]]); // a fresh journal starts at the version it had
    expect(j.changedSince('old', 0)).toBeUndefined();
  });
});
