import { describe, expect, it } from 'vitest';
import { compareSemver, compareVersions, parseSemver } from './semver.ts';

describe('semver', () => {
  it('orders by precedence, pre-releases below their release', () => {
    const order = ['0.1.0', '0.11.0-rc.9', '0.11.0-rc.25', '0.11.0-rc.83', '0.11.0', '1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-beta', '1.0.0', '10.0.0'];
    const parsed = order.map((v) => parseSemver(v)!);
    for (let i = 1; i < parsed.length; i++) expect(compareSemver(parsed[i - 1], parsed[i])).toBe(-1);
  });

  it('rejects what is not semver and ranks it below semver for "latest"', () => {
    expect(parseSemver('1.0')).toBeUndefined();
    expect(parseSemver('01.0.0')).toBeUndefined();
    expect(compareVersions('latest', '0.0.1')).toBe(-1);
    expect(['b', '0.2.0', 'a', '0.10.0'].sort(compareVersions)).toEqual(['a', 'b', '0.2.0', '0.10.0']);
  });
});
