/**
 * Bundle manifest signing (runtime.md §1 "Signature"; admin-wire-a §3.3 step 3, step 7).
 *
 * The signed message is SHA-256 of the RFC 8785 (JCS) canonical manifest with `signature` and every
 * `_`-prefixed top-level key removed; Ed25519 signs that 32-byte digest, not the canonical bytes.
 * `signerId` is `did:key:z` + base58btc(0xED 0x01 ‖ public key) and is itself part of the signed
 * bytes. The application id of a bundle is SHA-256(borsh(package, signerId)): version-stable.
 */
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { rawPublicKeyBytes } from '../crypto/keys.ts';
import { badRequest } from '../errors.ts';
import { BorshWriter } from '../codec/borsh.ts';
import { SIGNATURE_ALGORITHM } from './constants.ts';

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** multicodec prefix of an Ed25519 public key (did:key method) */
const ED25519_MULTICODEC = [0xed, 0x01];

export function base58Encode(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = '';
  while (n > 0n) {
    out = B58[Number(n % 58n)] + out;
    n /= 58n;
  }
  return '1'.repeat(zeros) + out;
}

/**
 * RFC 8785 canonical JSON: object keys sorted by UTF-16 code units, no whitespace, ECMAScript
 * number and string serialisation (which is what `JSON.stringify` does for finite numbers).
 */
export function canonicalize(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw badRequest('manifest contains a number JSON cannot represent');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalize).join(',')}]`;
  if (typeof value === 'object') {
    const keys = Object.keys(value as object).sort();
    const obj = value as Record<string, unknown>;
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalize(obj[k])}`).join(',')}}`;
  }
  throw badRequest(`manifest contains a value JSON cannot represent (${typeof value})`);
}

/** SHA-256 of the canonical manifest without `signature` and `_`-prefixed keys (the "bundle hash"). */
export function signingDigest(manifest: Record<string, unknown>): Buffer {
  const unsigned: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(manifest)) {
    if (k !== 'signature' && !k.startsWith('_')) unsigned[k] = v;
  }
  return createHash('sha256').update(canonicalize(unsigned), 'utf8').digest();
}

export function didKeyOf(publicKey: Uint8Array): string {
  return `did:key:z${base58Encode(Uint8Array.from([...ED25519_MULTICODEC, ...publicKey]))}`;
}

/** The raw 32-byte public key of an Ed25519 key object (private or public). */
export function rawPublicKey(key: KeyObject): Buffer {
  if (key.asymmetricKeyType !== 'ed25519') throw badRequest('the signing key is not an Ed25519 key');
  return rawPublicKeyBytes(key);
}

/** An Ed25519 private key from PEM (PKCS#8) text. */
export function loadSigningKey(pem: string | Buffer): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw badRequest('the signing key is not a PEM private key');
  }
  if (key.asymmetricKeyType !== 'ed25519') throw badRequest(`the signing key is ${key.asymmetricKeyType}, not Ed25519`);
  return key;
}

/**
 * Signs a manifest in place of any previous signature: sets `signerId` from the key, then adds
 * `signature {algorithm, publicKey, signature, signedAt}`. Returns a new object.
 */
export function signManifest(manifest: Record<string, unknown>, key: KeyObject, signedAt = new Date()): Record<string, unknown> {
  const publicKey = rawPublicKey(key);
  const unsigned: Record<string, unknown> = { ...manifest, signerId: didKeyOf(publicKey) };
  delete unsigned.signature;
  const sig = sign(null, signingDigest(unsigned), key);
  return {
    ...unsigned,
    signature: {
      algorithm: SIGNATURE_ALGORITHM,
      publicKey: publicKey.toString('base64url'),
      signature: sig.toString('base64url'),
      signedAt: signedAt.toISOString(),
    },
  };
}

export interface ManifestVerification {
  signerId: string;
  publicKey: Buffer;
  /** hex SHA-256 of the canonical unsigned manifest */
  bundleHash: string;
}

function decodeB64url(text: unknown, field: string, size: number): Buffer {
  if (typeof text !== 'string' || !/^[A-Za-z0-9_-]*$/.test(text)) {
    throw badRequest(`bundle signature: ${field} must be base64url without padding`);
  }
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.length !== size) throw badRequest(`bundle signature: ${field} must decode to ${size} bytes, got ${bytes.length}`);
  return bytes;
}

/** Checks the mandatory signature of a parsed manifest object; 400 naming what is wrong. */
export function verifyManifestSignature(manifest: Record<string, unknown>): ManifestVerification {
  const signature = manifest.signature;
  if (signature === undefined || signature === null) throw badRequest('bundle is not signed: manifest.json has no signature');
  if (typeof signature !== 'object' || Array.isArray(signature)) throw badRequest('bundle signature: must be an object');
  const s = signature as Record<string, unknown>;
  if (s.algorithm !== SIGNATURE_ALGORITHM) {
    throw badRequest(`bundle signature: unsupported algorithm ${JSON.stringify(s.algorithm)}, expected "${SIGNATURE_ALGORITHM}"`);
  }
  const publicKey = decodeB64url(s.publicKey, 'publicKey', 32);
  const sig = decodeB64url(s.signature, 'signature', 64);
  const digest = signingDigest(manifest);
  let ok = false;
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKey.toString('base64url') }, format: 'jwk' });
    ok = verify(null, digest, key, sig);
  } catch {
    ok = false;
  }
  if (!ok) throw badRequest('bundle signature does not verify: the manifest was changed after signing, or signed with another key');
  const signerId = manifest.signerId;
  if (typeof signerId !== 'string' || signerId === '') throw badRequest('bundle manifest has no signerId');
  const expected = didKeyOf(publicKey);
  if (signerId !== expected) throw badRequest(`bundle signerId ${signerId} does not match the signing key (${expected})`);
  return { signerId, publicKey, bundleHash: digest.toString('hex') };
}

/** ApplicationId of a bundle: SHA-256(borsh(package: String, signerId: String)), 64 hex. */
export function applicationIdOf(pkg: string, signerId: string): string {
  return createHash('sha256').update(new BorshWriter().string(pkg).string(signerId).toBuffer()).digest('hex');
}
