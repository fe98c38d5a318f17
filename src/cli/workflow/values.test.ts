import { describe, expect, it } from 'vitest';
import { extractPath, MissingValueError, parseJsonLike, placeholdersIn, pyEqual, pyFloat, substitute, substituteDeep } from './values.ts';

describe('{{var}} substitution', () => {
  const values = { id: 'abc', n: 3, obj: { a: [1, 2] }, flag: true };

  it('keeps the type of a whole-string placeholder', () => {
    expect(substitute('{{obj}}', values)).toEqual({ a: [1, 2] });
    expect(substitute('{{ n }}', values)).toBe(3);
  });

  it('writes values into longer text, objects as JSON and booleans as merobox prints them', () => {
    expect(substitute('ctx-{{id}}-{{n}}', values)).toBe('ctx-abc-3');
    expect(substitute('x={{obj}}', values)).toBe('x={"a":[1,2]}');
    expect(substitute('{{flag}}!', values)).toBe('True!');
  });

  it('substitutes at any depth and names a value nothing exported', () => {
    expect(substituteDeep({ args: { key: '{{id}}', list: ['{{n}}'] } }, values)).toEqual({ args: { key: 'abc', list: [3] } });
    expect(() => substitute('{{missing}}', values)).toThrow(MissingValueError);
    expect(() => substitute('{{missing}}', values)).toThrow(/\{\{missing\}\} has no value/);
  });

  it('finds every placeholder in a value', () => {
    expect(placeholdersIn({ a: 'x {{one}} {{two}}', b: ['{{three}}'], c: 4 })).toEqual(['one', 'two', 'three']);
  });
});

describe('values as merobox reads them', () => {
  it('reads JSON, Python literals and JSON with trailing commas; leaves other text alone', () => {
    expect(parseJsonLike('{"a": 1}')).toEqual({ a: 1 });
    expect(parseJsonLike("{'output': 'v', 'ok': True, 'none': None}")).toEqual({ output: 'v', ok: true, none: null });
    expect(parseJsonLike('[1, 2,]')).toEqual([1, 2]);
    expect(parseJsonLike('hello')).toBe('hello');
  });

  it('follows dotted paths through objects, arrays and JSON text', () => {
    const v = { result: { output: '{"items":[{"id":"x"}]}' } };
    expect(extractPath(v, 'result.output.items.0.id')).toBe('x');
    expect(extractPath(v, 'result.missing')).toBeUndefined();
  });

  it('compares as Python does', () => {
    expect(pyEqual(1, 1.0)).toBe(true);
    expect(pyEqual(true, 1)).toBe(true);
    expect(pyEqual('1', 1)).toBe(false);
    expect(pyEqual({ a: [1, { b: null }] }, { a: [1, { b: null }] })).toBe(true);
    expect(pyEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(pyFloat(' 2.5 ')).toBe(2.5);
    expect(pyFloat('')).toBeUndefined();
    expect(pyFloat('abc')).toBeUndefined();
    expect(pyFloat(true)).toBe(1);
  });
});
