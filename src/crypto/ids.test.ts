import { describe, expect, it } from 'vitest';
import { accountIdOf, domainHash, parseId, toHex } from './ids.ts';

describe('ids', () => {
  it('domain_hash length-prefixes the domain and every part', () => {
    const a = toHex(domainHash('d', [Buffer.from('ab')]));
    const b = toHex(domainHash('d', [Buffer.from('a'), Buffer.from('b')]));
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });

  it('derives an account id from the root key deterministically', () => {
    const key = Buffer.alloc(32, 7);
    expect(accountIdOf(key)).toBe(accountIdOf(Buffer.alloc(32, 7)));
    expect(accountIdOf(key)).not.toBe(accountIdOf(Buffer.alloc(32, 8)));
  });

  it('parses hex in any case and base58 of 32 bytes, and nothing else', () => {
    expect(parseId('AB'.repeat(32))).toBe('ab'.repeat(32));
    expect(parseId('11111111111111111111111111111111')).toBe('00'.repeat(32));
    expect(parseId('xyz')).toBeUndefined();
    expect(parseId('ab'.repeat(31))).toBeUndefined();
  });
});
