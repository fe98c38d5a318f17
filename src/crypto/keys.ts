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

function rawPublic(key: KeyObject): string {
  const jwk = key.export({ format: 'jwk' });
  return Buffer.from(jwk.x as string, 'base64url').toString('hex');
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
