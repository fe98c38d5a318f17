/**
 * The Ed25519 → X25519 public-key map against node:crypto: for random Ed25519 keys, the converted
 * public key equals the X25519 public key node:crypto derives from the same seed's clamped SHA-512
 * scalar; encodings that are no usable point are refused.
 */
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ed25519PublicToX25519, ed25519SeedOfPkcs8, ed25519SeedToX25519Scalar, x25519PrivateKey } from './x25519.ts';
import { rawPublicKeyBytes } from './keys.ts';

const rawPublic = rawPublicKeyBytes;

describe('ed25519PublicToX25519', () => {
  it('matches the X25519 public key node:crypto derives from the same seed, for 64 random keys', () => {
    for (let i = 0; i < 64; i++) {
      const { publicKey, privateKey } = generateKeyPairSync('ed25519');
      const seed = ed25519SeedOfPkcs8(privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'));
      const expected = rawPublic(createPublicKey(x25519PrivateKey(ed25519SeedToX25519Scalar(seed))));
      expect(ed25519PublicToX25519(rawPublic(publicKey))?.toString('hex')).toBe(expected.toString('hex'));
    }
  });

  it('ignores the sign bit of x (u depends on y only)', () => {
    const edPublic = rawPublic(generateKeyPairSync('ed25519').publicKey);
    const flipped = Buffer.from(edPublic);
    flipped[31] ^= 0x80;
    expect(ed25519PublicToX25519(flipped)).toEqual(ed25519PublicToX25519(edPublic));
  });

  it('refuses the identity (y = 1), y = −1 (u = 0), y ≥ p and a wrong length', () => {
    const one = Buffer.alloc(32);
    one[0] = 1;
    expect(ed25519PublicToX25519(one)).toBeUndefined();
    const minusOne = Buffer.from('ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', 'hex');
    expect(ed25519PublicToX25519(minusOne)).toBeUndefined();
    const p = Buffer.from('edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', 'hex');
    expect(ed25519PublicToX25519(p)).toBeUndefined();
    expect(ed25519PublicToX25519(Buffer.alloc(31))).toBeUndefined();
  });

  it('clamps the scalar as RFC 7748 does', () => {
    const s = ed25519SeedToX25519Scalar(Buffer.alloc(32, 7));
    expect(s[0] & 7).toBe(0);
    expect(s[31] & 0x80).toBe(0);
    expect(s[31] & 0x40).toBe(0x40);
  });
});
