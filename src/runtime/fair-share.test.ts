/** The fair scheduler's order (fair-share.ts): fewest workers held, then least recent worker time, then longest waiting. */
import { expect, it } from 'vitest';
import { FairShare } from './fair-share.ts';

it('picks the context holding the fewest workers, then the one that used the least worker time, then the longest waiting', () => {
  const fair = new FairShare(10_000);
  const held = new Map([['a', 1]]);
  const h = (c: string) => held.get(c) ?? 0;
  const all = () => true;
  const w = (context: string, since: number) => ({ context, since });
  // a holds a worker: b first though it came later
  expect(fair.pick([w('a', 1), w('b', 2)], h, all)?.context).toBe('b');
  // equal holdings: the context that used less worker time, whatever the arrival order
  fair.charge('runaway', 5_000);
  fair.charge('healthy', 5);
  expect(fair.pick([w('runaway', 1), w('healthy', 2)], h, all)?.context).toBe('healthy');
  // a context never run comes before one that has run
  expect(fair.pick([w('healthy', 1), w('fresh', 2)], h, all)?.context).toBe('fresh');
  // a full tie: the longest waiting
  expect(fair.pick([w('x', 5), w('y', 3)], h, all)?.context).toBe('y');
  // a context past its share is passed over; none eligible: none
  expect(fair.pick([w('b', 1), w('c', 2)], h, (c) => c !== 'b')?.context).toBe('c');
  expect(fair.pick([w('b', 1)], h, () => false)).toBeUndefined();
});

it('forgets worker time by half every half-life', async () => {
  const fair = new FairShare(50);
  fair.charge('a', 1_000);
  const now = performance.now();
  expect(fair.usedMs('a', now)).toBeGreaterThan(900);
  expect(fair.usedMs('a', now + 50)).toBeCloseTo(fair.usedMs('a', now) / 2, 5);
  expect(fair.usedMs('never')).toBe(0);
});

it('throttles a context stopped at its deadline: one worker, then cool-downs doubling to a bound that always end, lifted by a call done in time (issue #37 item 3)', () => {
  let t = 0;
  const fair = new FairShare(1_000, { coolAfter: 2, forgetMs: 8_000, firstCoolMs: 1_000, maxCoolMs: 4_000 }, () => t);
  expect(fair.share('r', 2)).toBe(2);
  fair.charge('r', 1_000, 'stopped');
  // one stop: one worker, no cool-down yet
  expect([fair.share('r', 2), fair.coolingMs('r')]).toEqual([1, 0]);
  fair.charge('r', 1_000, 'stopped');
  expect([fair.share('r', 2), fair.coolingMs('r')]).toEqual([0, 1_000]);
  // the cool-down ends: one worker again
  t += 1_000;
  expect([fair.share('r', 2), fair.coolingMs('r')]).toEqual([1, 0]);
  // each further stop doubles it, up to the bound; every one of them ends
  const cools: number[] = [];
  for (let i = 0; i < 5; i++) {
    fair.charge('r', 1_000, 'stopped');
    cools.push(fair.coolingMs('r'));
    t += fair.coolingMs('r');
    expect(fair.share('r', 2)).toBe(1);
  }
  expect(cools).toEqual([2_000, 4_000, 4_000, 4_000, 4_000]);
  expect(fair.throttledContexts()).toBe(1);
  // a call done in time lifts the throttle; other contexts were never touched
  fair.charge('r', 5, 'done');
  expect([fair.share('r', 2), fair.coolingMs('r'), fair.throttledContexts()]).toEqual([2, 0, 0]);
  expect(fair.share('healthy', 2)).toBe(2);
  // a failed worker (neither) changes nothing; a stop long forgotten starts over
  fair.charge('r', 1_000, 'stopped');
  fair.charge('r', 10);
  expect(fair.share('r', 2)).toBe(1);
  t += 8_000 + 1;
  expect(fair.share('r', 2)).toBe(2);
});

it('lets throttled contexts together hold all workers but one', () => {
  let t = 0;
  const fair = new FairShare(1_000, { coolAfter: 2, forgetMs: 8_000, firstCoolMs: 1_000, maxCoolMs: 4_000 }, () => t);
  for (const c of ['r1', 'r2', 'r3']) fair.charge(c, 1_000, 'stopped');
  // a pool of 3 (share 2): r1 and r2 hold one each, so r3 waits while a healthy context may take the third
  const holding = new Map([['r1', 1], ['r2', 1]]);
  expect(fair.mayTake('r3', 0, 2, holding)).toBe(false);
  expect(fair.mayTake('healthy', 0, 2, holding)).toBe(true);
  expect(fair.mayTake('r3', 0, 2, new Map([['r1', 1], ['healthy', 1]]))).toBe(true);
  expect(fair.mayTake('r1', 1, 2, new Map([['r1', 1]]))).toBe(false); // its share is one
});
