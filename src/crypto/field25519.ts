/**
 * Arithmetic modulo p = 2^255 − 19, the field of Curve25519 and edwards25519, with BigInt.
 * node:crypto signs and agrees keys but exposes no point operations; the few the node needs (the
 * Ed25519 → X25519 map for sealing, the point-validity check of `ed25519_verify`) use these.
 */

/** The field prime 2^255 − 19. */
export const P = (1n << 255n) - 19n;

/** `a mod p` in [0, p). */
export function mod(a: bigint): bigint {
  const r = a % P;
  return r < 0n ? r + P : r;
}

/** `base^exp mod p` by square-and-multiply. */
export function pow(base: bigint, exp: bigint): bigint {
  let result = 1n;
  let b = mod(base);
  for (let e = exp; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % P;
    b = (b * b) % P;
  }
  return result;
}

/** The multiplicative inverse (Fermat: a^(p−2)); 0 maps to 0. */
export function inverse(a: bigint): bigint {
  return pow(a, P - 2n);
}

/** A little-endian byte string as an integer. */
export function fromLittleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]);
  return n;
}

/** An integer below 2^256 as 32 little-endian bytes. */
export function toLittleEndian32(n: bigint): Buffer {
  const out = Buffer.alloc(32);
  for (let i = 0; i < 32; i++) {
    out[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  return out;
}
