import { expect, it } from 'vitest';
import { stringifyExact } from './json.ts';

it('writes BigInt values as bare integers, exactly', () => {
  expect(stringifyExact({ a: 18446744073709551615n, b: [1n, 'x'], c: 'u64:1' })).toBe('{"a":18446744073709551615,"b":[1,"x"],"c":"u64:1"}');
});

it('leaves user strings that look like a mark untouched', () => {
  const forged = '\u0000u64:12';
  expect(JSON.parse(stringifyExact({ s: forged, n: 5n }))).toEqual({ s: forged, n: 5 });
});

it('writes payloads without BigInt as JSON.stringify does, and still refuses cycles', () => {
  const payload = { a: [1, 'two', null, { b: true }], d: new Date(0), s: 'é\u2028"' };
  expect(stringifyExact(payload)).toBe(JSON.stringify(payload));
  const cyclic: Record<string, unknown> = { n: 1n };
  cyclic.self = cyclic;
  expect(() => stringifyExact(cyclic)).toThrow(TypeError);
});
