import { expect, it } from 'vitest';
import { stringifyExact } from './json.ts';

it('writes BigInt values as bare integers, exactly', () => {
  expect(stringifyExact({ a: 18446744073709551615n, b: [1n, 'x'], c: 'u64:1' })).toBe('{"a":18446744073709551615,"b":[1,"x"],"c":"u64:1"}');
});

it('leaves user strings that look like a mark untouched', () => {
  const forged = '\u0000u64:12';
  expect(JSON.parse(stringifyExact({ s: forged, n: 5n }))).toEqual({ s: forged, n: 5 });
});
