/**
 * Worker read caches kept across writes (issue #22; runtime.ts `refreshFor`, state-cache.ts): after
 * a write commits, the next call of the context on the same worker finds the rows that write read
 * and wrote already cached — fresh values, read by the main thread in one go — and a context's
 * calls go to the worker that holds its rows while it is free, never past the context's share.
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
