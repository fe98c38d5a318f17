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
