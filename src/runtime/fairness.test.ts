/**
 * Fair scheduling across contexts (issue #23 §4): N runaway contexts (N ≥ workers) each keep one
 * call waiting for a worker at all times — as calls serialised on a context's write lock do — and
 * a healthy context's call is still served within its normal time plus one deadline (and the start
 * of the worker that replaces a stopped one), not behind every runaway call queued before it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HearthError } from '../errors.ts';
import { output, startSpinRuntime, type SpinRuntime } from './test-support.ts';

const DEADLINE_MS = 2_000;
const WORKERS = 2;
const RUNAWAYS = 8;
/** a replaced worker's start (a thread, the TypeScript loader in tests, the module): generous on a loaded machine */
const WORKER_START_MS = 1_500;

let bed: SpinRuntime;
beforeAll(async () => {
  bed = await startSpinRuntime({ workers: WORKERS, deadlineMs: DEADLINE_MS });
}, 300_000);
afterAll(() => bed?.rt.stop());

it('with more runaway contexts than workers, a healthy context is served within its normal time plus one deadline', async () => {
  const healthy = new Uint8Array(32).fill(0x11);
  const quick = () => bed.call('quick', healthy);
  // the healthy context's normal time, on an idle pool
  let t = performance.now();
  expect(output(await quick())).toBe('done');
  const normal = performance.now() - t;

  let stopped = false;
  const loops = Array.from({ length: RUNAWAYS }, async (_, i) => {
    const contextId = new Uint8Array(32).fill(0x80 + i);
    while (!stopped) {
      // a runaway that found no worker within its wait is refused 503 (it did not run): it retries
      const r = await bed.call('spin', contextId).catch((e: unknown) => {
        if (e instanceof HearthError && e.kind === 'unavailable') return 'busy' as const;
        throw e;
      });
      if (r === 'busy') await new Promise((res) => setTimeout(res, 50));
      else if (!stopped) expect(r).toMatchObject({ ok: false, kind: 'Deadline' });
    }
  });
  try {
    // every runaway has run once: the pool queue holds RUNAWAYS - WORKERS runaway calls at all times
    await expect.poll(() => bed.rt.stats.replaced.deadline, { timeout: 8 * RUNAWAYS * DEADLINE_MS, interval: 100 }).toBeGreaterThanOrEqual(RUNAWAYS);
    const waits: number[] = [];
    for (let i = 0; i < 3; i++) {
      t = performance.now();
      expect(output(await quick())).toBe('done');
      waits.push(performance.now() - t);
    }
    // before issue #23 the call waited behind every runaway call queued before it: ~3.5 deadlines here
    for (const w of waits) expect(w).toBeLessThan(normal + DEADLINE_MS + WORKER_START_MS);
  } finally {
    stopped = true;
    await Promise.all(loops);
  }
}, 120_000);
