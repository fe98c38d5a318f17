/**
 * Ed25519 and X25519 keys with node:crypto: raw 32-byte public keys on the wire (hex), private
 * keys kept as PKCS#8 DER (base64) at rest.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';

export interface KeyPair {
  /** 32-byte raw public key, hex */
  publicKey: string;
  /** PKCS#8 DER, base64 */
  privateKey: string;
}

/**
 * Raw keys come out of DER, never out of `export({ format: 'jwk' })`: on Node 20 the JWK export of
 * an Ed25519/X25519 key holds the key's mutex while it allocates the strings, a garbage collection
 * there can run the destructor of the `generateKeyPairSync` job that made the key, which takes the
 * same mutex, and the thread waits on itself for ever (seen: a test process frozen in the JWK
 * export of a fresh key; /tmp stress: 40–60 k generate-and-export rounds with a small young
 * generation). The DER exports take no such lock. The DER forms of these keys are fixed: SPKI is a
 * 12-byte header and the 32-byte public key, PKCS#8 a 16-byte header and the 32-byte seed.
 */
const SPKI_BYTES = 44;
const PKCS8_BYTES = 48;
const OKP_TYPES = new Set(['ed25519', 'x25519']);

/** The raw 32-byte public key of an Ed25519 or X25519 key (public or private). */
export function rawPublicKeyBytes(key: KeyObject): Buffer {
  if (!OKP_TYPES.has(key.asymmetricKeyType ?? '')) throw new Error(`not an Ed25519 or X25519 key: ${key.asymmetricKeyType ?? key.type}`);
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  const der = pub.export({ format: 'der', type: 'spki' });
  if (der.length !== SPKI_BYTES) throw new Error(`unexpected SPKI length ${der.length}`);
  return der.subarray(SPKI_BYTES - 32);
}

/** The raw 32-byte seed of an Ed25519 or X25519 private key. */
export function rawPrivateSeed(key: KeyObject): Buffer {
  if (key.type !== 'private' || !OKP_TYPES.has(key.asymmetricKeyType ?? '')) throw new Error('not an Ed25519 or X25519 private key');
  const der = key.export({ format: 'der', type: 'pkcs8' });
  if (der.length !== PKCS8_BYTES) throw new Error(`unexpected PKCS#8 length ${der.length}`);
  return der.subarray(PKCS8_BYTES - 32);
}

function rawPublic(key: KeyObject): string {
  return rawPublicKeyBytes(key).toString('hex');
}

export function generateKeyPair(type: 'ed25519' | 'x25519'): KeyPair {
  const { publicKey, privateKey } = type === 'ed25519' ? generateKeyPairSync('ed25519') : generateKeyPairSync('x25519');
  return { publicKey: rawPublic(publicKey), privateKey: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64') };
}

export function privateKeyObject(pkcs8Base64: string): KeyObject {
  return createPrivateKey({ key: Buffer.from(pkcs8Base64, 'base64'), format: 'der', type: 'pkcs8' });
}

/** The raw public key of a PEM or DER private key. */
export function publicKeyOf(priv: KeyObject): string {
  return rawPublic(createPublicKey(priv));
}

export function ed25519Sign(priv: KeyObject, message: Uint8Array): string {
  return sign(null, message, priv).toString('hex');
}

/**
 * Public keys imported for verification, by hex: the same few keys (members, peers) sign most of
 * what a node verifies, and importing one from JWK costs about what the verification does.
 * Bounded; the oldest entry goes first.
 */
const verifyKeys = new Map<string, KeyObject>();
const VERIFY_KEYS_MAX = 1024;

function verifyKeyOf(publicKeyHex: string): KeyObject {
  let key = verifyKeys.get(publicKeyHex);
  if (!key) {
    key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKeyHex, 'hex').toString('base64url') }, format: 'jwk' });
    if (verifyKeys.size >= VERIFY_KEYS_MAX) verifyKeys.delete(verifyKeys.keys().next().value!);
    verifyKeys.set(publicKeyHex, key);
  }
  return key;
}

export function ed25519Verify(publicKeyHex: string, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKeyHex.length !== 64 || signature.length !== 64) return false;
  try {
    return verify(null, message, verifyKeyOf(publicKeyHex), signature);
  } catch {
    return false;
  }
}
