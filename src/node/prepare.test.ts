/**
 * Preparing the contexts' modules before listening (issue #22, prepare.ts): each distinct module
 * once, at most the limit, a failure skipped, and the wait bounded by the budget while the rest
 * goes on.
 */
import { describe, expect, it } from 'vitest';
import { prepareModules, type PrepareEntry } from './prepare.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function entries(spec: Array<[key: string, ms: number, fail?: boolean]>, log: string[]): PrepareEntry[] {
  return spec.map(([key, ms, fail]) => ({
    key,
    prepare: async () => {
      log.push(`start ${key}`);
      await sleep(ms);
      if (fail) throw new Error(`${key} does not compile`);
      log.push(`done ${key}`);
    },
  }));
}

describe('prepareModules', () => {
  it('prepares each distinct module once, in order, up to the limit', async () => {
    const log: string[] = [];
    const out = await prepareModules(entries([['a', 1], ['b', 1], ['a', 1], ['c', 1], ['d', 1]], log), { limit: 3, budgetMs: 5_000 });
    expect(out).toEqual({ total: 3, done: 3, timedOut: false });
    expect(log).toEqual(['start a', 'done a', 'start b', 'done b', 'start c', 'done c']);
  });

  it('skips a module that fails, reporting it, and prepares the others', async () => {
    const log: string[] = [];
    const failed: string[] = [];
    const out = await prepareModules(entries([['a', 1, true], ['b', 1]], log), { limit: 10, budgetMs: 5_000, onError: (key) => failed.push(key) });
    expect(out).toEqual({ total: 2, done: 2, timedOut: false });
    expect(failed).toEqual(['a']);
    expect(log).toContain('done b');
  });

  it('answers once the budget has passed, and the preparation goes on in the background', async () => {
    const log: string[] = [];
    const t0 = performance.now();
    const out = await prepareModules(entries([['fast', 1], ['slow', 400], ['after', 1]], log), { limit: 10, budgetMs: 100 });
    const waited = performance.now() - t0;
    expect(out).toEqual({ total: 3, done: 1, timedOut: true });
    expect(waited).toBeGreaterThanOrEqual(95);
    expect(waited).toBeLessThan(390); // not the slow module's time
    await expect.poll(() => log.includes('done after'), { timeout: 5_000 }).toBe(true);
  });

  it('an abort ends the wait and starts no further module', async () => {
    const log: string[] = [];
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 30);
    const out = await prepareModules(entries([['a', 100], ['b', 1]], log), { limit: 10, budgetMs: 5_000, signal: ac.signal });
    expect(out.timedOut).toBe(false);
    expect(out.done).toBe(0);
    await sleep(150);
    expect(log).toEqual(['start a', 'done a']);
  });

  it('nothing to prepare answers at once', async () => {
    expect(await prepareModules([], { limit: 10, budgetMs: 5_000 })).toEqual({ total: 0, done: 0, timedOut: false });
  });
});
