/**
 * Sealing a payload to an account's root key (admin spec "Groups" seal; admin-wire-b §4.19): a
 * fresh ephemeral X25519 key, ECDH with the recipient's root key converted Ed25519 → X25519,
 * HKDF-SHA256, AES-256-GCM. Only the holder of the account's root private key can open it.
 *
 * Key schedule (hearth's; the reference's rc.83 KDF label was not traced, docs/governance.md):
 *   shared = X25519(ephemeral private, X25519(root public))
 *   key    = HKDF-SHA256(ikm = shared, salt = ephemeral public ‖ X25519(root public),
 *                        info = SEAL_KDF_LABEL ‖ account id (32) ‖ u32le root epoch, 32 bytes)
 *   ciphertext = AES-256-GCM(key, 12-byte random nonce, plaintext, no AAD) ‖ 16-byte tag
 * Binding the account and epoch into `info` means an envelope opened under another account or
 * epoch fails authentication instead of yielding the plaintext.
 */
import { createCipheriv, createDecipheriv, createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import { ed25519PublicToX25519, ed25519SeedToX25519Scalar, x25519PrivateKey } from './x25519.ts';
import { rawPublicKeyBytes } from './keys.ts';
import type { SealedEnvelope } from '../wire/ownership.ts';

/** HKDF `info` prefix of a seal to an account root (NUL-terminated, like the reference's domains). */
export const SEAL_KDF_LABEL = 'hearth.seal.account-root.v1\0';
/** Largest plaintext the seal route accepts, decoded (admin-wire-b §4.19). */
export const SEAL_MAX_PLAINTEXT_BYTES = 64 * 1024;

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export interface SealRecipient {
  accountId: string;
  /** Ed25519 root public key, 64 hex */
  rootPublicKey: string;
  rootEpoch: number;
}

function x25519PublicKey(raw: Uint8Array): KeyObject {
  return createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: Buffer.from(raw).toString('base64url') }, format: 'jwk' });
}

function derivedKey(shared: Buffer, ephemeralPublic: Buffer, recipientX: Buffer, accountId: string, epoch: number): Buffer {
  const epochLe = Buffer.alloc(4);
  epochLe.writeUInt32LE(epoch);
  const info = Buffer.concat([Buffer.from(SEAL_KDF_LABEL, 'utf8'), Buffer.from(accountId, 'hex'), epochLe]);
  return Buffer.from(hkdfSync('sha256', shared, Buffer.concat([ephemeralPublic, recipientX]), info, 32));
}

/** Converts the recipient's root key; throws a plain Error for a key that is not a usable point. */
function recipientX25519(rootPublicKey: string): Buffer {
  const x = ed25519PublicToX25519(Buffer.from(rootPublicKey, 'hex'));
  if (!x) throw new Error('root public key is not a usable Ed25519 point');
  return x;
}

export function sealToRoot(to: SealRecipient, plaintext: Uint8Array): SealedEnvelope {
  const recipientX = recipientX25519(to.rootPublicKey);
  const ephemeral = generateKeyPairSync('x25519');
  const ephemeralPublic = rawPublicKeyBytes(ephemeral.publicKey);
  const shared = diffieHellman({ privateKey: ephemeral.privateKey, publicKey: x25519PublicKey(recipientX) });
  const key = derivedKey(shared, ephemeralPublic, recipientX, to.accountId, to.rootEpoch);
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return { accountRootEpoch: to.rootEpoch, ephemeralPublicKey: ephemeralPublic.toString('hex'), nonce: nonce.toString('hex'), ciphertext: body.toString('hex') };
}

/**
 * Opens an envelope with the root's Ed25519 seed (what the account holder does). Throws when the
 * envelope was not sealed to this root, account and epoch, or was altered.
 */
export function openSealed(rootSeed: Uint8Array, accountId: string, envelope: SealedEnvelope): Buffer {
  const scalar = ed25519SeedToX25519Scalar(rootSeed);
  const privateKey = x25519PrivateKey(scalar);
  const recipientX = rawPublicKeyBytes(createPublicKey(privateKey));
  const ephemeralPublic = Buffer.from(envelope.ephemeralPublicKey, 'hex');
  const shared = diffieHellman({ privateKey, publicKey: x25519PublicKey(ephemeralPublic) });
  const key = derivedKey(shared, ephemeralPublic, recipientX, accountId, envelope.accountRootEpoch);
  const body = Buffer.from(envelope.ciphertext, 'hex');
  if (body.length < TAG_BYTES) throw new Error('sealed ciphertext is shorter than its tag');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(envelope.nonce, 'hex'));
  decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
  return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]);
}
