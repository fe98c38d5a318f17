/**
 * Runaway contexts throttled (issue #37 item 3; fair-share.ts): 12 contexts whose every call spins
 * to its deadline, on 3 workers, and a healthy context calling throughout. The healthy context's
 * calls succeed or are refused 503 with Retry-After (they did not run), never a failed call; the
 * runaways are held to one worker and cool down, and each runs again after its cool-downs.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HearthError } from '../errors.ts';
import { output, startSpinRuntime, type SpinRuntime } from './test-support.ts';

const DEADLINE_MS = 1_000;
const WORKERS = 3;
const RUNAWAYS = 12;

let bed: SpinRuntime;
beforeAll(async () => {
  bed = await startSpinRuntime({ workers: WORKERS, deadlineMs: DEADLINE_MS });
}, 300_000);
afterAll(() => bed?.rt.stop());

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A refusal the client may retry: 503 with Retry-After; the message when it is anything else. */
const refusal = (e: unknown): { retryAfterSecs: number; message: string } => {
  if (e instanceof HearthError && e.kind === 'unavailable' && Number(e.extra.retryAfterSecs) > 0) return { retryAfterSecs: Number(e.extra.retryAfterSecs), message: e.message };
  throw e;
};

it('12 runaway contexts on 3 workers: a healthy context is served or refused 503 with Retry-After, and every runaway runs again after its cool-downs', async () => {
  const ran = new Array<number>(RUNAWAYS).fill(0);
  let cooled = 0;
  let stopped = false;
  const runaways = Array.from({ length: RUNAWAYS }, async (_, i) => {
    const contextId = new Uint8Array(32).fill(0x80 + i);
    while (!stopped) {
      const r = await bed.call('spin', contextId).catch(refusal);
      if ('retryAfterSecs' in r) {
        if (/cools down/.test(r.message)) cooled++;
        await pause(100); // sooner than Retry-After says: a cooling context is refused at once
      } else {
        expect(r).toMatchObject({ ok: false, kind: 'Deadline' });
        ran[i]!++;
      }
    }
  });
  const healthy = new Uint8Array(32).fill(0x11);
  const outcomes: string[] = [];
  const failures: unknown[] = [];
  const calls = (async () => {
    while (!stopped) {
      const r = await bed.call('quick', healthy).catch(refusal);
      if ('retryAfterSecs' in r) outcomes.push('503');
      else if (r.ok && output(r) === 'done') outcomes.push('ok');
      else failures.push(r); // a 200 carrying an error
      await pause(200);
    }
  })();
  try {
    // every runaway ran three times: its third run came after the cool-down its second stop began
    await expect.poll(() => Math.min(...ran), { timeout: 150_000, interval: 250 }).toBeGreaterThanOrEqual(3);
  } finally {
    stopped = true;
    await Promise.all([...runaways, calls]);
  }
  expect(failures).toEqual([]);
  expect(outcomes).toContain('ok');
  expect(cooled).toBeGreaterThan(0);
  expect(bed.rt.stats.replaced.deadline).toBeGreaterThanOrEqual(3 * RUNAWAYS);
}, 200_000);
