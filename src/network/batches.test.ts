import { describe, expect, it } from 'vitest';
import { batches } from './router.ts';

describe('batches', () => {
  it('packs items into runs within the budget, in order', () => {
    const items = ['aa', 'bb', 'cc', 'dd', 'ee']; // JSON length 4 each
    expect([...batches(items, 8)]).toEqual([['aa', 'bb'], ['cc', 'dd'], ['ee']]);
    expect([...batches(items, 100)]).toEqual([items]);
  });

  it('gives an item larger than the budget a run of its own, and nothing for no items', () => {
    expect([...batches(['x', 'a very long item', 'y'], 5)]).toEqual([['x'], ['a very long item'], ['y']]);
    expect([...batches([], 10)]).toEqual([]);
  });

  it('takes the size from the caller when given', () => {
    expect([...batches([3, 3, 3, 1], 6, (n) => n)]).toEqual([[3, 3], [3, 1]]);
  });
});
