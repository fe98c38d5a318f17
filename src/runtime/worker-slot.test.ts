/**
 * The worker started ahead of the pool (worker-slot.ts `prestartWorker`, issue #33): the pool's
 * first spawn takes it and calls run on it; one no pool took is ended by `dropPrestartedWorker`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../../test/helpers/wasm-apps.ts';
import { WasmRuntime } from './runtime.ts';
import { newViews, request } from './test-support.ts';
import { DEFAULT_LIMITS } from './limits.ts';
import { dropPrestartedWorker, prestartWorker, spawnSlot } from './worker-slot.ts';

let kv: Uint8Array;
beforeAll(async () => {
  kv = await buildTestApp('kv');
});

describe('a prestarted worker', () => {
  it('is the one the first spawn takes, and only the first', async () => {
    const early = prestartWorker();
    expect(prestartWorker()).toBe(early); // one at a time
    const on = { ready: () => undefined, idleError: () => undefined };
    const first = spawnSlot(DEFAULT_LIMITS, on);
    const second = spawnSlot(DEFAULT_LIMITS, on);
    try {
      expect(first.worker).toBe(early);
      expect(second.worker).not.toBe(early);
      await Promise.all([first.ready, second.ready]);
      expect(first.tid).toBeTypeOf('number');
    } finally {
      await Promise.all([first.worker.terminate(), second.worker.terminate()]);
    }
  });

  it('runs the pool’s calls when the runtime took it', async () => {
    const early = prestartWorker();
    const rt = new WasmRuntime({ poolSize: 1, idleRetireMs: 0 });
    await rt.start();
    try {
      const v = newViews();
      await rt.prepare({ applicationId: 'kv', wasm: async () => kv });
      expect(rt.workers).toBe(1);
      const init = await rt.call(request('kv', kv, 'init', undefined, v));
      expect(init).toMatchObject({ ok: true });
      expect(rt.workers).toBe(1);
      // the pool's one worker is the prestarted one: ending it ends the pool's worker
      const exited = new Promise((r) => early.once('exit', r));
      await rt.stop();
      await exited;
    } finally {
      await rt.stop();
    }
  });

  it('is ended when no pool took it', async () => {
    const early = prestartWorker();
    const exited = new Promise<number>((r) => early.once('exit', r));
    dropPrestartedWorker();
    await exited;
    // the next spawn starts a worker of its own
    const slot = spawnSlot(DEFAULT_LIMITS, { ready: () => undefined, idleError: () => undefined });
    try {
      expect(slot.worker).not.toBe(early);
      await slot.ready;
    } finally {
      await slot.worker.terminate();
    }
  });
});
