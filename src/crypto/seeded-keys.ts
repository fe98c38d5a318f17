/**
 * Ed25519 keys made from a 32-byte seed (admin-wire-a §4.3), shared by the domains that mint keys:
 * a context id is the public key of a fresh random private key, or of one derived from
 * `contextSeed`; `identitySecret` is a raw 32-byte Ed25519 private key (64 hex) whose public key
 * becomes the creator's member key; a group signing key and a delegate's key are made the same way.
 */
import { createPrivateKey, randomBytes, type KeyObject } from 'node:crypto';
import { parseId } from './ids.ts';
import { publicKeyOf } from './keys.ts';
import { badRequest } from '../errors.ts';

/** PKCS#8 DER prefix of an Ed25519 private key; the 32-byte seed follows (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface SeededKey {
  publicKey: string;
  /** PKCS#8 DER, base64 (node-local; never logged or answered) */
  privateKey: string;
}

export function keyFromSeed(seed: Uint8Array): SeededKey {
  const der = Buffer.concat([ED25519_PKCS8_PREFIX, Buffer.from(seed)]);
  const key: KeyObject = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  return { publicKey: publicKeyOf(key), privateKey: der.toString('base64') };
}

export function randomKey(): SeededKey {
  return keyFromSeed(randomBytes(32));
}

/** A 32-byte value given as 64 hex or base58 (older clients); 400 naming the field otherwise. */
export function parseSeed(raw: string, field: string): Uint8Array {
  const hex = parseId(raw);
  if (!hex) throw badRequest(`Invalid ${field}: expected 32 bytes as 64 hex characters`);
  return new Uint8Array(Buffer.from(hex, 'hex'));
}
