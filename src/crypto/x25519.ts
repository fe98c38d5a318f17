/**
 * Ed25519 → X25519 key conversion for sealing to an account's root key (admin-wire-b §4.19: "ECDH
 * with the root (Ed25519→X25519)"). An account publishes only its Ed25519 root public key; the
 * Montgomery u-coordinate of the same point is `u = (1 + y) / (1 − y) mod p` (RFC 7748 §4.1, the
 * birational map), and the matching X25519 private scalar is the one Ed25519 itself uses: the lower
 * half of SHA-512(seed), clamped. node:crypto has no conversion, so the map is done here with BigInt.
 */
import { createHash, createPrivateKey, type KeyObject } from 'node:crypto';
import { fromLittleEndian, inverse, P, toLittleEndian32 } from './field25519.ts';

/**
 * The X25519 public key (32 bytes) of an Ed25519 public key (32 bytes). Returns undefined for an
 * encoding that is not a usable point: a y-coordinate ≥ p, or y = ±1, which map to u = ∞ / u = 0
 * (the identity and a low-order point, which would give a shared secret anyone can compute).
 */
export function ed25519PublicToX25519(edPublic: Uint8Array): Buffer | undefined {
  if (edPublic.length !== 32) return undefined;
  const yBytes = Buffer.from(edPublic);
  yBytes[31] &= 0x7f; // the top bit is the sign of x; u does not depend on it
  const y = fromLittleEndian(yBytes);
  if (y >= P || y === 1n || y === P - 1n) return undefined;
  const u = ((1n + y) * inverse(1n - y)) % P;
  return toLittleEndian32(u);
}

/** The clamped X25519 scalar of an Ed25519 seed (RFC 8032 §5.1.5 steps 1–2). */
export function ed25519SeedToX25519Scalar(seed: Uint8Array): Buffer {
  const h = createHash('sha512').update(seed).digest();
  const scalar = Buffer.from(h.subarray(0, 32));
  scalar[0] &= 248;
  scalar[31] &= 127;
  scalar[31] |= 64;
  return scalar;
}

/** PKCS#8 DER prefix of a raw 32-byte X25519 private key (RFC 8410, OID 1.3.101.110). */
const X25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');

/** A node:crypto X25519 private key from a raw 32-byte scalar. */
export function x25519PrivateKey(scalar: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([X25519_PKCS8_PREFIX, scalar]), format: 'der', type: 'pkcs8' });
}

/** The raw 32-byte seed of an Ed25519 private key held as PKCS#8 DER (base64), as NodeIdentity stores it. */
export function ed25519SeedOfPkcs8(pkcs8Base64: string): Buffer {
  const der = Buffer.from(pkcs8Base64, 'base64');
  return der.subarray(der.length - 32);
}
