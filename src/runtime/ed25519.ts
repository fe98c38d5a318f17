/**
 * Whether 32 bytes are a valid compressed Ed25519 point — what ed25519-dalek's
 * `VerifyingKey::from_bytes` checks, and so when the reference's `ed25519_verify` traps
 * `incorrect ed25519 public key` rather than answering 0 (runtime.md §2). Node's `createPublicKey`
 * accepts any 32 bytes, so the decompression test is done here: the point exists when
 * x² = (y² − 1) / (d·y² + 1) has a square root modulo p = 2^255 − 19.
 */
import { inverse, mod, P, pow } from '../crypto/field25519.ts';

const D = mod(-121665n * inverse(121666n));

export function isEd25519Point(key: Uint8Array): boolean {
  if (key.length !== 32) return false;
  let y = 0n;
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(i === 31 ? key[i] & 0x7f : key[i]);
  const y2 = mod(y * y);
  const x2 = mod((y2 - 1n) * inverse(mod(D * y2 + 1n)));
  // Euler's criterion: 0 or a quadratic residue
  return x2 === 0n || pow(x2, (P - 1n) / 2n) === 1n;
}
