import { describe, expect, it } from 'vitest';
import { isFresh, spend, type NonceLedger } from './nonces.ts';

describe('warrant nonce window', () => {
  it('spends each nonce once, accepts out-of-order nonces within 64, refuses stale ones', () => {
    let l: NonceLedger | undefined;
    for (const n of [5n, 3n, 70n]) {
      expect(isFresh(l, n)).toBe(true);
      l = spend(l, n);
    }
    expect(isFresh(l, 5n)).toBe(false); // 70 - 5 = 65: below the window
    expect(isFresh(l, 7n)).toBe(true);
    expect(isFresh(l, 6n)).toBe(false);
    expect(isFresh(l, 70n)).toBe(false);
    expect(isFresh(l, 69n)).toBe(true);
    expect(l!.spent).toEqual(['70']); // 3 and 5 left the window
    l = spend(l, 2n ** 64n - 1n);
    expect(l.max).toBe((2n ** 64n - 1n).toString());
    expect(isFresh(l, 2n ** 64n - 1n)).toBe(false);
  });
});
