import { describe, expect, it } from 'vitest';
import { every, SingleFlight } from './schedule.ts';

describe('every', () => {
  it('repeats a task after each run settles, even a failing one, until the signal aborts', async () => {
    const stop = new AbortController();
    let runs = 0;
    every(5, async () => {
      runs++;
      if (runs === 2) throw new Error('a failed run does not end the loop');
    }, stop.signal);
    await new Promise((r) => setTimeout(r, 120));
    stop.abort();
    const seen = runs;
    expect(seen).toBeGreaterThanOrEqual(4);
    await new Promise((r) => setTimeout(r, 50));
    expect(runs).toBe(seen);
  });
});

describe('SingleFlight', () => {
  it('joins a call to the run in flight for its key, and runs again once it settled', async () => {
    const f = new SingleFlight<number>();
    let calls = 0;
    const slow = () => new Promise<number>((r) => setTimeout(() => r(++calls), 20));
    const [x, y, z] = await Promise.all([f.run('k', slow), f.run('k', slow), f.run('other', slow)]);
    expect(x).toBe(y);
    expect(z).not.toBe(x);
    expect(await f.run('k', slow)).toBe(3);
    await f.settled();
  });
});
