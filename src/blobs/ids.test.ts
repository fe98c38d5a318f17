import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeBase58, normalizeId } from './ids.ts';

describe('blob ids', () => {
  it('accepts 64 hex in any case and answers lowercase', () => {
    expect(normalizeId('AB'.repeat(32))).toBe('ab'.repeat(32));
    expect(normalizeId('ab'.repeat(31))).toBeUndefined();
    expect(normalizeId('zz'.repeat(32))).toBeUndefined();
  });

  it('decodes base58 of 32 bytes (the reference vectors)', () => {
    // all-zero id
    expect(normalizeId('11111111111111111111111111111111')).toBe('00'.repeat(32));
    // empty blob id = SHA-256("") (admin-wire-a §5.3)
    expect(normalizeId('GKot5hBsd81kMupNCXHaqbhv3huEbxAFMLnpcX2hniwn')).toBe(createHash('sha256').update('').digest('hex'));
  });

  it('refuses base58 that is not 32 bytes or not base58', () => {
    expect(normalizeId('abc')).toBeUndefined();
    expect(normalizeId('0OIl'.repeat(10))).toBeUndefined();
    expect(decodeBase58('2')).toEqual(new Uint8Array([1]));
    expect(decodeBase58('5R')).toEqual(new Uint8Array([1, 0]));
  });
});
