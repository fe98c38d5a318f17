import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { collect, idArg, idOrAliasArg } from './id-args.ts';

const HEX = 'ab'.repeat(32);
// base58 of 32 bytes of 0x00…01: 31 leading '1's and the digit 2
const B58_ONE = `${'1'.repeat(31)}2`;

describe('id arguments', () => {
  it('normalises hex to lowercase and base58 to hex', () => {
    expect(idArg(HEX.toUpperCase())).toBe(HEX);
    expect(idArg(B58_ONE)).toBe(`${'00'.repeat(31)}01`);
  });

  it('refuses anything else with a commander argument error', () => {
    for (const bad of ['', 'abc', `${HEX}00`, 'z'.repeat(64), '0OIl'.repeat(10)]) {
      expect(() => idArg(bad), bad).toThrow(InvalidArgumentError);
    }
  });

  it('takes an id or an alias, the id winning when both fit', () => {
    expect(idOrAliasArg(HEX)).toEqual({ id: HEX });
    expect(idOrAliasArg('kv-app.v1')).toEqual({ alias: 'kv-app.v1' });
    expect(() => idOrAliasArg('has space')).toThrow(InvalidArgumentError);
    expect(() => idOrAliasArg('a'.repeat(51))).toThrow(InvalidArgumentError);
  });

  it('collects repeated options in order', () => {
    expect(collect('b', collect('a'))).toEqual(['a', 'b']);
  });
});
