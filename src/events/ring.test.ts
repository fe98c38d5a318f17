import { expect, it } from 'vitest';
import { ReplayRing } from './ring.ts';

it('numbers frames from 1 and keeps only the newest `capacity`', () => {
  const r = new ReplayRing(3);
  expect([r.first, r.last]).toEqual([1, 0]);
  for (const d of ['a', 'b', 'c', 'd', 'e']) r.push(d);
  expect([r.first, r.last]).toEqual([3, 5]);
  expect([r.get(2), r.get(3), r.get(4), r.get(5), r.get(6)]).toEqual([undefined, 'c', 'd', 'e', undefined]);
});

it('refuses a capacity below one', () => {
  expect(() => new ReplayRing(0)).toThrow(RangeError);
});
