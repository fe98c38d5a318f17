import { describe, expect, it } from 'vitest';
import { ed25519Sign, ed25519Verify, generateKeyPair, privateKeyObject } from './keys.ts';

describe('ed25519Verify', () => {
  it('accepts the signer’s signature and refuses any other message, key or malformed input', () => {
    const a = generateKeyPair('ed25519');
    const b = generateKeyPair('ed25519');
    const msg = Buffer.from('a delta digest');
    const sig = Buffer.from(ed25519Sign(privateKeyObject(a.privateKey), msg), 'hex');
    for (let i = 0; i < 3; i++) expect(ed25519Verify(a.publicKey, msg, sig)).toBe(true); // also from the kept key
    expect(ed25519Verify(a.publicKey, Buffer.from('another'), sig)).toBe(false);
    expect(ed25519Verify(b.publicKey, msg, sig)).toBe(false);
    expect(ed25519Verify('zz'.repeat(32), msg, sig)).toBe(false);
    expect(ed25519Verify(a.publicKey.slice(2), msg, sig)).toBe(false);
    expect(ed25519Verify(a.publicKey, msg, sig.subarray(1))).toBe(false);
  });

  it('stays correct past the bound of kept keys', () => {
    const msg = Buffer.from('m');
    const pairs = Array.from({ length: 1100 }, () => generateKeyPair('ed25519'));
    const sigs = pairs.map((p) => Buffer.from(ed25519Sign(privateKeyObject(p.privateKey), msg), 'hex'));
    for (let i = 0; i < pairs.length; i++) expect(ed25519Verify(pairs[i]!.publicKey, msg, sigs[i]!)).toBe(true);
    // the first keys were evicted: imported again, still right
    expect(ed25519Verify(pairs[0]!.publicKey, msg, sigs[0]!)).toBe(true);
    expect(ed25519Verify(pairs[0]!.publicKey, msg, sigs[1]!)).toBe(false);
  });
});
