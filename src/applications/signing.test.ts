import { createHash, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signingKey } from '../../test/helpers/bundles.ts';
import { HearthError } from '../errors.ts';
import { applicationIdOf, base58Encode, canonicalize, didKeyOf, rawPublicKey, signManifest, signingDigest, verifyManifestSignature } from './signing.ts';

describe('canonicalize (RFC 8785)', () => {
  it('sorts keys by UTF-16 code units and writes no whitespace', () => {
    expect(canonicalize({ b: 1, a: [true, null, 'x'], A: { z: 1.5, y: 'é' } })).toBe('{"A":{"y":"é","z":1.5},"a":[true,null,"x"],"b":1}');
    // "\u20ac" (U+20AC) sorts before "\ud83d\ude00" (a surrogate pair) by code units
    expect(canonicalize({ '😀': 1, '€': 2, '\r': 3 })).toBe('{"\\r":3,"€":2,"😀":1}');
  });

  it('serialises numbers the ECMAScript way', () => {
    expect(canonicalize([1e21, 1e-7, -0, 100, 0.1])).toBe('[1e+21,1e-7,0,100,0.1]');
  });
});

describe('ids', () => {
  it('derives the kv-store application id from package and signer (runtime.md §1 test vector)', () => {
    const id = applicationIdOf('com.calimero.kv-store', 'did:key:z6MknF3p5L5FDHJQ7FREUapuX4Wmp4MtF6WrHYaXS2B3eZQd');
    expect(id).toBe('ad61b1324e760fc4a8cb2beaeb1a799e4bac774b5f78bebe66f2cb863774926f');
    expect(base58Encode(Buffer.from(id, 'hex'))).toBe('Cfow1SkzdqiVvzy6MzBME9g6b4sgwBtetGHiBgfC9QHc');
  });

  it('keeps leading zero bytes as leading 1s in base58', () => {
    expect(base58Encode(new Uint8Array(32))).toBe('1'.repeat(32));
  });

  it('makes a did:key from the multicodec-prefixed Ed25519 key', () => {
    expect(didKeyOf(new Uint8Array(32))).toMatch(/^did:key:z6Mk/);
  });
});

describe('manifest signatures', () => {
  const base = { version: '1.0', package: 'com.example.app', appVersion: '1.0.0', minRuntimeVersion: '0.1.0', migrations: [] };

  it('signs SHA-256 of the canonical manifest and verifies it', () => {
    const key = signingKey();
    const signed = signManifest(base, key);
    const v = verifyManifestSignature(signed);
    expect(v.signerId).toBe(didKeyOf(rawPublicKey(key)));
    expect(signed.signerId).toBe(v.signerId);
    expect(v.bundleHash).toBe(signingDigest(signed).toString('hex'));
    const { signature: _s, ...unsigned } = signed;
    expect(v.bundleHash).toBe(createHash('sha256').update(canonicalize(unsigned)).digest('hex'));
  });

  it('ignores _-prefixed top-level keys and key order, but signs unknown fields', () => {
    const signed = signManifest(base, signingKey());
    const reordered = Object.fromEntries(Object.entries({ _note: 'added later', ...signed }).reverse());
    expect(() => verifyManifestSignature(reordered)).not.toThrow();
    expect(() => verifyManifestSignature({ ...signed, migrations: ['x'] })).toThrow(/does not verify/);
  });

  it('refuses a tampered manifest, a foreign signerId, a bad algorithm and a missing signature', () => {
    const key = signingKey();
    const signed = signManifest(base, key);
    expect(() => verifyManifestSignature({ ...signed, appVersion: '1.0.1' })).toThrow(/does not verify/);
    const other = signManifest(base, signingKey());
    // a signature of another key over a manifest naming the first signer
    expect(() => verifyManifestSignature({ ...signed, signature: other.signature })).toThrow(HearthError);
    const resigned = signManifest({ ...base, signerId: 'x' }, key);
    expect(() => verifyManifestSignature({ ...resigned, signature: { ...(resigned.signature as object), algorithm: 'Ed25519' } })).toThrow(/algorithm/);
    const { signature: _s, ...unsigned } = signed;
    expect(() => verifyManifestSignature(unsigned)).toThrow(/not signed/);
  });

  it('refuses a signerId that is not the did:key of the signing key', () => {
    const key = signingKey();
    const signed = signManifest(base, key);
    // a valid signature by `key` over a manifest that names another signer
    const { signature, ...unsigned } = signed;
    const forged: Record<string, unknown> = { ...unsigned, signerId: didKeyOf(rawPublicKey(signingKey())) };
    const sig = sign(null, signingDigest(forged), key).toString('base64url');
    forged.signature = { ...(signature as object), signature: sig };
    expect(() => verifyManifestSignature(forged)).toThrow(/does not match the signing key/);
  });
});
