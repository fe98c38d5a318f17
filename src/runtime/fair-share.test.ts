/**
 * The fair scheduler's order (fair-share.ts): fewest workers held, then least recent worker time, then
 * longest waiting; and the throttle of contexts whose calls keep running into their deadline.
 */
import { describe, expect, it } from 'vitest';
import { FairShare, Throttle } from './fair-share.ts';

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

// issue #37 item 3: a context that keeps burning its whole deadline
describe('the throttle of runaway contexts', () => {
  it('narrows a context stopped at its deadline to one call, then cools it down for twice the deadline, doubling while it keeps failing', () => {
    const t = new Throttle({ deadlineMs: 1_000, maxCoolMs: 5_000 });
    expect(t.share('a', 2, 0)).toBe(2);
    expect(t.stopped('a', 0)).toBe(0);
    expect(t.share('a', 2, 1)).toBe(1);
    expect(t.coolingMs('a', 1)).toBe(0);
    expect(t.stopped('a', 10)).toBe(2_000); // the second stop in a row: a cool-down
    expect(t.share('a', 2, 11)).toBe(0);
    expect(t.coolingMs('a', 1_010)).toBe(1_000);
    // back after the cool-down, one call at a time; the next stop cools it for twice as long, up to the cap
    expect(t.share('a', 2, 2_010)).toBe(1);
    expect(t.stopped('a', 3_000)).toBe(4_000);
    expect(t.stopped('a', 8_000)).toBe(5_000);
    // other contexts are not touched
    expect(t.share('b', 2, 8_000)).toBe(2);
    expect(t.size).toBe(1);
  });

  it('forgives a context whose calls end within their deadline again, and one quiet for long', () => {
    const t = new Throttle({ deadlineMs: 1_000, maxCoolMs: 4_000 });
    t.stopped('a', 0);
    t.finished('a', 100);
    expect(t.share('a', 2, 100)).toBe(2);
    expect(t.size).toBe(0);
    // one stop, one success, one stop: never two in a row, never cooled
    t.stopped('a', 200);
    t.finished('a', 300);
    expect(t.stopped('a', 400)).toBe(0);
    t.stopped('b', 0);
    expect(t.stopped('b', 1)).toBe(2_000);
    expect(t.share('b', 2, 2_001 + 8_000)).toBe(2); // quiet for twice the longest cool-down
  });

  it('never cools a context for less than twice the deadline, whatever the cap', () => {
    const t = new Throttle({ deadlineMs: 10_000, maxCoolMs: 1_000 });
    t.stopped('a', 0);
    expect(t.stopped('a', 0)).toBe(20_000);
  });
});
