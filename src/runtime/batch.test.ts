/**
 * Batches (batch-run.ts): read-only calls of one context waiting for a worker go to it in one
 * message; each still answers alone, under its own deadline, and an abort skips a call not yet run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../test/helpers/wasm-apps.ts';
import type { CallRequest } from './call-types.ts';
import { WasmRuntime } from './runtime.ts';
import { bytes, newViews, output, request } from './test-support.ts';

let spin: Uint8Array;
let kv: Uint8Array;
let rt: WasmRuntime;
const X = bytes(32, 0x0a);
const Y = bytes(32, 0x0b);
const call = (method: string, args: unknown, extra: Partial<CallRequest>) => rt.call(request('spin', spin, method, args, newViews(), extra));
/** holds the one worker for `ms` with a call of context X, so that Y's calls wait and go as one batch */
const block = (ms: number) => call('busy', { ms }, { contextId: X });
const grow = (pages: number, extra: Partial<CallRequest> = {}) => call('grow_past_limit', { pages }, { contextId: Y, readOnly: true, ...extra });

beforeAll(async () => {
  [spin, kv] = await Promise.all([buildTestApp('spin'), buildTestApp('kv')]);
});

describe('batches of read-only calls', () => {
  beforeAll(async () => {
    rt = new WasmRuntime({ poolSize: 1, deadlineMs: 5_000 });
    await rt.start({ warm: true });
  });
  afterAll(() => rt.stop());

  it('each call of a batch gets its own result, each on a fresh instance', async () => {
    const before = structuredClone(rt.stats);
    const blocker = block(300);
    const got = await Promise.all([1, 2, 3, 4, 5].map((pages) => grow(pages)));
    expect(output(await blocker)).toBeTypeOf('number');
    const answers = got.map((r) => output(r) as { grow: number; pages: number });
    // every call found memory as the instance starts (isolation), and grew it by its own input
    const start = answers[0]!.grow;
    expect(answers).toEqual([1, 2, 3, 4, 5].map((pages) => ({ grow: start, pages: start + pages })));
    expect(rt.stats.batched.calls - before.batched.calls).toBe(5);
    expect(rt.stats.batched.batches - before.batched.batches).toBe(1);
  });

  it("each call of a batch reads its own views over the bridge (the reads are routed by the call's seq)", async () => {
    const before = structuredClone(rt.stats);
    // each call of context Y is given its own views, holding its own value under the same key
    const calls = Array.from({ length: 8 }, (_, i) => {
      const views = newViews();
      return { i, views };
    });
    for (const { i, views } of calls) {
      for (const [method, args] of [['init', undefined], ['set', { key: 'k', value: `v${i}` }]] as const) {
        const r = await rt.call(request('kv', kv, method, args, views, { contextId: Y }));
        if (!r.ok) throw new Error(r.message);
        views.state.apply(r.writes);
      }
    }
    const blocker = block(300);
    const got = await Promise.all(calls.map(({ views }) => rt.call(request('kv', kv, 'get', { key: 'k' }, views, { contextId: Y, readOnly: true }))));
    await blocker;
    expect(got.map(output)).toEqual(calls.map(({ i }) => `v${i}`));
    expect(rt.stats.batched.calls - before.batched.calls).toBe(8);
    expect(rt.stats.roundTrips - before.roundTrips).toBeGreaterThanOrEqual(8);
  });

  it('a call past its deadline in a batch fails alone: the worker is replaced and the calls behind it still answer', async () => {
    const before = structuredClone(rt.stats);
    const blocker = block(300);
    const first = grow(1);
    const runaway = call('spin', undefined, { contextId: Y, readOnly: true, deadlineMs: 300 });
    const behind = [grow(2), grow(3)];
    await blocker;
    expect(output(await first)).toMatchObject({ pages: expect.any(Number) });
    expect(await runaway).toEqual({ ok: false, kind: 'Deadline', message: 'execution exceeded its deadline of 300 ms', logs: [] });
    const [two, three] = (await Promise.all(behind)).map((r) => output(r) as { grow: number; pages: number });
    expect([two!.pages - two!.grow, three!.pages - three!.grow]).toEqual([2, 3]);
    expect(rt.stats.replaced.deadline - before.replaced.deadline).toBe(1);
    // the four went as one batch; the two behind the runaway went again, together, to the new worker
    expect(rt.stats.batched.batches - before.batched.batches).toBe(2);
    expect(rt.stats.batched.calls - before.batched.calls).toBe(6);
  });

  it('a call whose caller went away before its turn in the batch is not run', async () => {
    const before = structuredClone(rt.stats);
    const blocker = block(200);
    const slow = call('busy', { ms: 400 }, { contextId: Y, readOnly: true });
    const gone = new AbortController();
    const skipped = grow(5, { signal: gone.signal });
    const last = grow(6);
    await blocker;
    // the batch is on the worker now, running `slow`
    setTimeout(() => gone.abort(), 100);
    const t0 = Date.now();
    expect(await skipped).toMatchObject({ ok: false, kind: 'Aborted', message: 'execution aborted' });
    expect(Date.now() - t0).toBeLessThan(300); // answered at once, not after `slow`
    expect(output(await slow)).toBeTypeOf('number');
    expect(output(await last)).toMatchObject({ pages: expect.any(Number) });
    // blocker, slow and last ran; the skipped call did not (no call counted, none abandoned)
    expect(rt.stats.calls - before.calls).toBe(3);
    expect(rt.stats.abandoned - before.abandoned).toBe(0);
    expect(rt.stats.batched.calls - before.batched.calls).toBe(3);
    expect(rt.stats.replaced.deadline - before.replaced.deadline).toBe(0);
  });

  it('writes are never batched', async () => {
    const before = structuredClone(rt.stats);
    const blocker = block(200);
    const writes = [1, 2, 3].map((pages) => call('grow_past_limit', { pages }, { contextId: Y, readOnly: false }));
    await blocker;
    for (const r of await Promise.all(writes)) expect(output(r)).toMatchObject({ pages: expect.any(Number) });
    expect(rt.stats.batched.batches - before.batched.batches).toBe(0);
  });
});
