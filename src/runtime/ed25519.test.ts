import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isEd25519Point } from './ed25519.ts';
import { rawPublicKeyBytes } from '../crypto/keys.ts';

const rawKey = () => rawPublicKeyBytes(generateKeyPairSync('ed25519').publicKey);
const yKey = (y: number) => {
  const k = new Uint8Array(32);
  k[0] = y;
  return k;
};

describe('isEd25519Point', () => {
  it('accepts real public keys and the identity point (y = 1)', () => {
    for (let i = 0; i < 20; i++) expect(isEd25519Point(rawKey())).toBe(true);
    expect(isEd25519Point(yKey(1))).toBe(true);
  });

  it('refuses encodings that decompress to no point, and wrong lengths', () => {
    // about half of all y values have no x: among small y some must be refused
    const refused = Array.from({ length: 20 }, (_, y) => y).filter((y) => !isEd25519Point(yKey(y)));
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.length).toBeLessThan(20);
    expect(isEd25519Point(new Uint8Array(31))).toBe(false);
  });
});
