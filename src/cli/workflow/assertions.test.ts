import { describe, expect, it } from 'vitest';
import { evalAssert, evalJsonAssert, isSubset } from './assertions.ts';

const values = { got: 'hello world', count: 3, empty: '', list: [], ctx: 'abc123', result: { output: 'v', extra: 1 } };
const holds = (s: string) => evalAssert(s, values).passed;
const jsonHolds = (s: string) => evalJsonAssert(s, values).passed;

describe('assert statements', () => {
  it('compares with operators: numbers as numbers, the rest as text', () => {
    expect(holds('{{count}} >= 1')).toBe(true);
    expect(holds('{{count}} > 3')).toBe(false);
    expect(holds('{{count}} == 3.0')).toBe(true);
    expect(holds('{{got}} == hello world')).toBe(true);
    expect(holds("{{got}} != 'hello'")).toBe(true);
    expect(holds('{{ctx}} < abd')).toBe(true);
  });

  it('runs the predicates', () => {
    expect(holds("contains({{got}}, 'world')")).toBe(true);
    expect(holds("contains({{got}}, 'moon')")).toBe(false);
    expect(holds("not_contains({{got}}, 'moon')")).toBe(true);
    expect(holds("regex({{ctx}}, '^abc[0-9]+$')")).toBe(true);
    expect(holds('is_set({{ctx}})')).toBe(true);
    expect(holds('is_set({{empty}})')).toBe(false);
    expect(holds('is_empty({{list}})')).toBe(true);
    expect(holds("equal({{got}}, 'hello world')")).toBe(true);
    expect(holds("not_equal({{got}}, 'hello world')")).toBe(false);
  });

  it('equal() compares values with their types, as merobox does (3 is not "3")', () => {
    expect(holds('equal({{count}}, 3)')).toBe(false);
    expect(holds('{{count}} == 3')).toBe(true);
  });

  it('says why a statement failed, and refuses what it cannot read', () => {
    expect(evalAssert("contains({{got}}, 'moon')", values).detail).toBe("(left='hello world', right='moon')");
    expect(evalAssert('contains(a, b, c)', values)).toEqual({ passed: false, detail: '(invalid contains arg count)' });
    expect(evalAssert('{{got}} is fine', values)).toEqual({ passed: false, detail: '(unrecognized statement)' });
  });

  it('fails on a value nothing exported', () => {
    expect(() => evalAssert('is_set({{nope}})', values)).toThrow(/\{\{nope\}\} has no value/);
  });
});

describe('json_assert statements', () => {
  it('checks equality and subsets of JSON values, Python-style literals included', () => {
    expect(jsonHolds('json_equal({{result}}, {"output": "v", "extra": 1})')).toBe(true);
    expect(jsonHolds("json_subset({{result}}, {'output': 'v'})")).toBe(true);
    expect(jsonHolds("subset({{result}}, {'output': 'w'})")).toBe(false);
    expect(jsonHolds("equal({{result}}, {'output': 'v'})")).toBe(false);
    expect(jsonHolds('json_same({{result}}, {})')).toBe(false);
  });

  it('treats lists as unordered containment in a subset', () => {
    expect(isSubset({ a: [1, 2, 3] }, { a: [3, 1] })).toBe(true);
    expect(isSubset({ a: [1, 2] }, { a: [4] })).toBe(false);
  });
});
