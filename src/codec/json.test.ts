import { describe, expect, it } from 'vitest';
import { JsonDepthError, jsonTooDeep, MAX_JSON_DEPTH, parseJson, stringifyJson } from './json.ts';

describe('parseJson', () => {
  const samples = [
    '{"a":1,"b":[true,false,null],"c":"x\\"y\\\\z\\u00e9","d":{"e":-0.5e3}}',
    '[]',
    '{}',
    ' "s" ',
    '-12.75',
    '{"id":"12345678901234567890","n":1234567890123456}',
    '[1e21, 9007199254740991, -9007199254740991, 0]',
  ];

  it.each(samples)('decodes %s exactly like JSON.parse', (text) => {
    expect(parseJson(text)).toEqual(JSON.parse(text));
  });

  it('keeps integers above 2^53-1 exact as bigint', () => {
    const body = parseJson('{"data":{"nonce":18446744073709551615,"small":42,"neg":-9007199254740993}}');
    expect(body).toEqual({ data: { nonce: 18446744073709551615n, small: 42, neg: -9007199254740993n } });
  });

  it('keeps the boundary 2^53-1 a number and 2^53 a bigint', () => {
    expect(parseJson('[9007199254740991,9007199254740992]')).toEqual([9007199254740991, 9007199254740992n]);
  });

  it('can decode unsafe integers as decimal strings', () => {
    expect(parseJson('{"v":12345678901234567891}', { bigint: 'string' })).toEqual({ v: '12345678901234567891' });
  });

  it('leaves long digit runs inside strings alone', () => {
    expect(parseJson('{"id":"99999999999999999999","x":1}')).toEqual({ id: '99999999999999999999', x: 1 });
  });

  it('decodes fractions and exponents as numbers even when long', () => {
    expect(parseJson('[12345678901234567890.5, 12345678901234567890e2]')).toEqual([
      12345678901234567890.5, 12345678901234567890e2,
    ]);
  });

  it('keeps "__proto__" an own property', () => {
    const value = parseJson('{"__proto__":{"polluted":1},"n":12345678901234567890}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['__proto__', 'n']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each(['{"a":1,}', '[1 2]', '{"a" 1}', '01', '"abc', '{"n":12345678901234567890} x', 'tru'])(
    'rejects invalid JSON %s',
    (text) => {
      expect(() => parseJson(`${text} 1234567890123456`)).toThrow(SyntaxError);
    },
  );
});

describe('stringifyJson', () => {
  it('writes bigints as bare integer literals', () => {
    expect(stringifyJson({ ttl_secs: 18446744073709551615n, n: 1 })).toBe('{"ttl_secs":18446744073709551615,"n":1}');
  });

  it('matches JSON.stringify for ordinary values', () => {
    const value = { a: [1, 'x', null, undefined, () => 1], b: undefined, c: new Date(0), d: NaN, e: { f: true } };
    expect(stringifyJson(value)).toBe(JSON.stringify(value));
  });

  it('round-trips u64 values through parseJson', () => {
    const value = { nonce: 2n ** 64n - 1n, counter: 7 };
    expect(parseJson(stringifyJson(value))).toEqual(value);
  });
});

describe('nesting depth (issue #17 finding 6)', () => {
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);

  it('reads and writes documents up to the reference depth of 128', () => {
    const v = parseJson(deep(MAX_JSON_DEPTH));
    expect(stringifyJson(v)).toBe(deep(MAX_JSON_DEPTH));
  });

  it('refuses deeper documents with a typed error instead of exhausting the stack', () => {
    expect(() => parseJson(deep(MAX_JSON_DEPTH + 1))).toThrow(JsonDepthError);
    expect(() => parseJson(`{"n":18446744073709551615,"a":${deep(5000)}}`)).toThrow(JsonDepthError);
    expect(() => stringifyJson(JSON.parse(deep(5000)))).toThrow(JsonDepthError);
  });

  it('does not count brackets inside strings', () => {
    expect(jsonTooDeep(`["${'['.repeat(500)}\\"${'{'.repeat(500)}"]`)).toBe(false);
    expect(jsonTooDeep(deep(129))).toBe(true);
  });
});
