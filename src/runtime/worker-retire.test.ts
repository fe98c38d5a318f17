/**
 * Idle workers retire (issue #22, worker-retire.ts): the policy on its own with a clock the test
 * moves, then the pool of runtime.ts giving back its extra workers after a load and still answering.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../test/helpers/wasm-apps.ts';
import { WasmRuntime } from './runtime.ts';
import { newViews, request } from './test-support.ts';
import { IdleRetirement, INSTANCE_RELEASE_MS, WORKER_RESOURCE_LIMITS } from './worker-retire.ts';

describe('IdleRetirement', () => {
  function pool(keep: number, idleMs = 100) {
    let now = 0;
    const slots = ['a', 'b', 'c'].map((name) => ({ name, busy: false }));
    const gone: string[] = [];
    const r = new IdleRetirement({
      idleMs,
      keep,
      slots: () => slots,
      isFree: (s) => !s.busy,
      retire: (s) => (slots.splice(slots.indexOf(s), 1), gone.push(s.name)),
      now: () => now,
    });
    return { r, slots, gone, at: (t: number) => (now = t) };
  }

  it('retires workers free for the idle time, the longest idle first, down to the kept number', () => {
    const { r, slots, gone, at } = pool(1);
    at(0);
    r.touched(slots[1]!); // b
    at(30);
    r.touched(slots[0]!); // a
    at(60);
    r.touched(slots[2]!); // c
    at(99);
    expect(r.sweep()).toBe(0); // none idle for 100 ms yet
    at(135);
    expect(r.sweep()).toBe(2);
    expect(gone).toEqual(['b', 'a']);
    at(10_000);
    expect(r.sweep()).toBe(0); // c is kept
    expect(slots.map((s) => s.name)).toEqual(['c']);
    expect(r.retired).toBe(2);
  });

  it('never retires a busy worker or one never used, and keeps none when told to', () => {
    const { r, slots, gone, at } = pool(0);
    at(0);
    r.touched(slots[0]!);
    r.touched(slots[1]!);
    slots[1]!.busy = true;
    at(500);
    expect(r.sweep()).toBe(1);
    expect(gone).toEqual(['a']); // b is busy, c was never touched (still loading)
  });

  it('a worker used again is not retired', () => {
    const { r, slots, gone, at } = pool(0);
    at(0);
    for (const s of slots) r.touched(s);
    at(90);
    r.touched(slots[2]!);
    at(120);
    expect(r.sweep()).toBe(2);
    expect(gone).toEqual(['a', 'b']);
  });
});

describe('the runtime pool retires idle workers', () => {
  let kv: Uint8Array;
  beforeAll(async () => {
    kv = await buildTestApp('kv');
  }, 120_000);

  /** `init`, its writes committed as the contexts domain does */
  async function init(rt: WasmRuntime, v: ReturnType<typeof newViews>): Promise<void> {
    const r = await rt.call(request('kv', kv, 'init', undefined, v));
    if (!r.ok) throw new Error(`init: ${r.kind}: ${r.message}`);
    v.state.apply(r.writes);
  }
  const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const retiredMetric = (rt: WasmRuntime) => rt.series().find((s) => s.name === 'hearth_runtime_workers_retired_total')!.read()[0]!.value;

  it('gives back the extra workers once idle, keeps one warm, and answers after', async () => {
    const rt = new WasmRuntime({ poolSize: 3, idleRetireMs: 150, keepWorkers: 1 });
    await rt.start({ warm: true });
    try {
      // (on a loaded machine the first workers up may already have retired while the last loaded)
      // workers are started with the capped young generation
      const slots = (rt as unknown as { slots: Array<{ worker: { resourceLimits?: { maxYoungGenerationSizeMb?: number } } }> }).slots;
      expect(slots[0]!.worker.resourceLimits?.maxYoungGenerationSizeMb).toBe(WORKER_RESOURCE_LIMITS.maxYoungGenerationSizeMb);
      const v = newViews();
      await init(rt, v);
      await expect.poll(() => rt.workers, { timeout: 5_000, interval: 50 }).toBe(1);
      await settle(300); // sweeps go on: the kept one stays
      expect(rt.workers).toBe(1);
      expect(retiredMetric(rt)).toBe(2);
      const r = await rt.call(request('kv', kv, 'len', {}, v));
      expect(r).toMatchObject({ ok: true });
      expect(rt.stats.replaced).toEqual({ deadline: 0, error: 0, exit: 0 });
    } finally {
      await rt.stop();
    }
  });

  it('with none kept, an idle pool is empty and the next call starts a worker again', async () => {
    const rt = new WasmRuntime({ poolSize: 2, idleRetireMs: 100, keepWorkers: 0 });
    await rt.start();
    try {
      const v = newViews();
      await init(rt, v);
      expect(rt.workers).toBe(1);
      await expect.poll(() => rt.workers, { timeout: 5_000, interval: 50 }).toBe(0);
      const r = await rt.call(request('kv', kv, 'len', {}, v));
      expect(r).toMatchObject({ ok: true });
      expect(rt.workers).toBe(1);
    } finally {
      await rt.stop();
    }
  });

  it('a worker free for INSTANCE_RELEASE_MS lets its kept instance go; the next call instantiates again and answers', async () => {
    const rt = new WasmRuntime({ poolSize: 1, idleRetireMs: 0 });
    await rt.start();
    try {
      const v = newViews();
      await init(rt, v);
      const first = await rt.call(request('kv', kv, 'len', {}, v));
      const created = rt.stats.instancesCreated;
      expect(await rt.call(request('kv', kv, 'len', {}, v))).toEqual(first);
      expect(rt.stats.instancesCreated).toBe(created); // kept between calls
      await settle(INSTANCE_RELEASE_MS + 1_500);
      expect(await rt.call(request('kv', kv, 'len', {}, v))).toEqual(first);
      expect(rt.stats.instancesCreated).toBe(created + 1);
      expect(rt.workers).toBe(1); // the worker itself stays
    } finally {
      await rt.stop();
    }
  }, INSTANCE_RELEASE_MS + 20_000);

  it('idleRetireMs 0 never retires', async () => {
    const rt = new WasmRuntime({ poolSize: 2, idleRetireMs: 0, keepWorkers: 0 });
    await rt.start({ warm: true });
    try {
      await settle(300);
      expect(rt.workers).toBe(2);
      expect(retiredMetric(rt)).toBe(0);
    } finally {
      await rt.stop();
    }
  });
});
