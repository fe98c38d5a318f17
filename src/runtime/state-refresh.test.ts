/**
 * Worker read caches kept across writes (issue #22; runtime.ts `refreshFor`, state-cache.ts): after
 * a write commits, the next call of the context on the same worker finds the rows that write read
 * and wrote already cached — fresh values, read by the main thread in one go — and a context's
 * calls go to the worker that holds its rows while it is free, never past the context's share.
 * With the context store's journal (`changedSince`, issue #33) the worker keeps every row it holds
 * but those written since its version, which come fresh with the job.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../test/helpers/wasm-apps.ts';
import type { CallRequest, CallSuccess } from './call-types.ts';
import { WasmRuntime } from './runtime.ts';
import { newViews, output, request, type Views } from './test-support.ts';

let kvStore: Uint8Array;
let spin: Uint8Array;
const runtimes: WasmRuntime[] = [];

beforeAll(async () => {
  [kvStore, spin] = await Promise.all([buildTestApp('kv_store'), buildTestApp('spin')]);
}, 300_000);

afterEach(async () => {
  for (const r of runtimes.splice(0)) await r.stop();
});

async function runtime(poolSize: number): Promise<WasmRuntime> {
  const r = new WasmRuntime({ poolSize });
  runtimes.push(r);
  await r.start({ warm: true });
  return r;
}

/** a context whose state lives in `views`, its version bumped by every committed write, as the contexts domain does */
function context(rt: WasmRuntime, views: Views, contextId = new Uint8Array(32).fill(0xc1)) {
  let version = 1;
  const call = async (method: string, args?: unknown, extra: Partial<CallRequest> = {}) => {
    const r = await rt.call(request('kv_store', kvStore, method, args, views, { stateVersion: version, contextId, ...extra }));
    if (!r.ok) throw new Error(`${method}: ${r.message}`);
    if (r.writes.length > 0) {
      views.state.apply((r as CallSuccess).writes);
      version++;
    }
    return r;
  };
  return { call, bump: () => version++ };
}

describe('the worker’s cache after a write', () => {
  it('holds the rows the write read and wrote: the next call asks nothing, and sees every row fresh', async () => {
    const rt = await runtime(1);
    const v = newViews();
    const ctx = context(rt, v);
    await ctx.call('init');
    await ctx.call('set', { key: 'a', value: '1' });
    await ctx.call('get', { key: 'a' });
    const trips = () => rt.stats.roundTrips;
    const t0 = trips();
    // a write under the current version: its rows are cached; it commits, and the version moves
    await ctx.call('set', { key: 'a', value: '2' });
    const afterSet = trips();
    expect(afterSet - t0).toBe(0);
    expect(output(await ctx.call('get', { key: 'a' }))).toBe('2');
    expect(trips()).toBe(afterSet); // the rows were refreshed with the job, none asked for
    // another writer changes a row behind the worker's back (a remote delta): the refresh reads it fresh
    v.state.put('kv:item:a', 'from elsewhere');
    ctx.bump();
    expect(output(await ctx.call('get', { key: 'a' }))).toBe('from elsewhere');
    expect(trips()).toBe(afterSet);
    // a row no earlier call read is asked for
    expect(output(await ctx.call('get', { key: 'b' }))).toBeNull();
    expect(trips()).toBeGreaterThan(afterSet);
    // a long run of writes and reads, each answered as the store holds it, with no round trip once
    // the first write asked for the rows no call under this version had read yet
    await ctx.call('set', { key: 'a', value: 'warm' });
    const before = trips();
    for (let i = 0; i < 20; i++) {
      await ctx.call('set', { key: 'a', value: `v${i}` });
      expect(output(await ctx.call('get', { key: 'a' }))).toBe(`v${i}`);
    }
    expect(trips()).toBe(before);
  });

  it('with a journal of the rows each version wrote, keeps every row but those: writes of other keys ask nothing', async () => {
    const rt = await runtime(1);
    const v = newViews();
    let version = 1;
    /** the rows each version move wrote; `lost`: the journal no longer reaches back */
    const moves: Array<{ version: number; rows: Array<['state', Uint8Array]> }> = [];
    let lost = false;
    const changedSince = (since: number) => (lost ? undefined : moves.filter((m) => m.version > since).flatMap((m) => m.rows));
    const call = async (method: string, args?: unknown) => {
      const r = await rt.call(request('kv_store', kvStore, method, args, v, { stateVersion: version, changedSince, contextId: new Uint8Array(32).fill(0xc2) }));
      if (!r.ok) throw new Error(`${method}: ${r.message}`);
      if (r.writes.length > 0) {
        v.state.apply(r.writes);
        moves.push({ version: ++version, rows: r.writes.map(([k]) => ['state', k]) });
      }
      return r;
    };
    await call('init');
    const values = new Map<string, string>();
    const set = async (key: string, value: string) => (await call('set', { key, value }), values.set(key, value));
    for (const key of ['a', 'b', 'c', 'd']) await set(key, 'first');
    // every key's rows were read once (the writes above): from here on, nothing is asked for
    const t0 = rt.stats.roundTrips;
    for (let i = 0; i < 12; i++) {
      await set('abcd'[(i * 3) % 4], `v${i}`);
      const other = 'abcd'[(i + 1) % 4];
      expect(output(await call('get', { key: other }))).toBe(values.get(other));
    }
    expect(rt.stats.roundTrips).toBe(t0);
    // a row written behind the worker's back and recorded in the journal is read fresh
    v.state.put('kv:item:b', 'from elsewhere');
    moves.push({ version: ++version, rows: [['state', new TextEncoder().encode('kv:item:b')]] });
    expect(output(await call('get', { key: 'b' }))).toBe('from elsewhere');
    expect(rt.stats.roundTrips).toBe(t0);
    // the journal cannot say what changed: the worker keeps only the rows its last call read, and
    // asks for the rest (here the row changed behind its back)
    v.state.put('kv:item:c', 'unrecorded');
    version++;
    lost = true;
    expect(output(await call('get', { key: 'c' }))).toBe('unrecorded');
    expect(rt.stats.roundTrips).toBeGreaterThan(t0);
  });

  it('a context’s calls go to the worker holding its rows while it is free; another worker when it is busy', async () => {
    const rt = await runtime(3);
    const v = newViews();
    const ctxA = context(rt, v);
    // context B keeps worker 0 busy, so A's first calls run on another worker and warm it
    const busy = rt.call(request('spin', spin, 'busy', { ms: 400 }, newViews(), { contextId: new Uint8Array(32).fill(0xbb) }));
    await new Promise((r) => setTimeout(r, 50));
    await ctxA.call('init');
    await ctxA.call('set', { key: 'a', value: '1' });
    await ctxA.call('get', { key: 'a' });
    await busy;
    // worker 0 is free again, but A's calls keep going to the worker that holds A's rows
    const t0 = rt.stats.roundTrips;
    for (let i = 0; i < 5; i++) expect(output(await ctxA.call('get', { key: 'a' }))).toBe('1');
    expect(rt.stats.roundTrips).toBe(t0);
    // the share still bounds a context: at most all workers but one, warm or not
    const calls = Array.from({ length: 4 }, () => rt.call(request('spin', spin, 'busy', { ms: 200 }, newViews(), { contextId: new Uint8Array(32).fill(0xc1) })));
    await new Promise((r) => setTimeout(r, 50));
    const other = await rt.call(request('spin', spin, 'quick', undefined, newViews(), { contextId: new Uint8Array(32).fill(0xdd) }));
    expect(other.ok).toBe(true);
    await Promise.all(calls);
  });
});
