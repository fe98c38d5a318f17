/**
 * Pairing byte layouts (admin-wire-b §3.3–§3.4, the reference's `crates/account/src/pairing.rs`):
 * the 72-byte statement (u64 big-endian `issued_at` ‖ Ed25519 signature by the new device's signing
 * key), the confirmation code, and the age window a statement must fall in. Also the device
 * credential the root holder hands back, in hearth's own layout (see docs/governance.md).
 */
import { domainHash } from '../crypto/ids.ts';
import { ed25519Verify } from '../crypto/keys.ts';

/** A statement older than this is refused (spec Limits). */
export const PAIRING_MAX_AGE_SECS = 300;
/** A statement dated further than this in the future is refused (reference). */
export const PAIRING_MAX_SKEW_SECS = 60;

export interface PairingOffer {
  accountId: string;
  deviceId: string;
  kemPublicKey: string;
  signPublicKey: string;
}

const hex = (s: string) => Buffer.from(s, 'hex');

function u64be(n: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(n);
  return b;
}

export function statementDigest(o: PairingOffer, issuedAtSecs: bigint): Buffer {
  return domainHash('calimero.device.pairing.v1', [hex(o.accountId), hex(o.deviceId), hex(o.kemPublicKey), hex(o.signPublicKey), u64be(issuedAtSecs)]);
}

/** 144 hex: issued_at (u64 BE) ‖ signature. */
export function encodeStatement(issuedAtSecs: bigint, signatureHex: string): string {
  return u64be(issuedAtSecs).toString('hex') + signatureHex;
}

/** `XXXX-XXXX-XXXX-XXXX`: the first 8 bytes of the confirm hash, uppercase hex. */
export function confirmationCode(o: PairingOffer): string {
  const h = domainHash('calimero.device.pairing.confirm.v1', [hex(o.accountId), hex(o.deviceId), hex(o.kemPublicKey), hex(o.signPublicKey)]);
  return (h.subarray(0, 8).toString('hex').toUpperCase().match(/.{4}/g) as string[]).join('-');
}

export type StatementCheck = { ok: true } | { ok: false; reason: string };

/** Verifies a statement's signature and age; `nowSecs` is the verifier's wall clock. */
export function checkStatement(o: PairingOffer, statementHex: string, nowSecs: number): StatementCheck {
  const bytes = hex(statementHex);
  if (bytes.length !== 72) return { ok: false, reason: 'statement must be 72 bytes' };
  const issuedAt = bytes.readBigUInt64BE(0);
  const now = BigInt(nowSecs);
  if (issuedAt + BigInt(PAIRING_MAX_AGE_SECS) < now) return { ok: false, reason: `statement is older than ${PAIRING_MAX_AGE_SECS} seconds` };
  if (issuedAt > now + BigInt(PAIRING_MAX_SKEW_SECS)) return { ok: false, reason: 'statement is dated in the future' };
  if (!ed25519Verify(o.signPublicKey, statementDigest(o, issuedAt), bytes.subarray(8))) {
    return { ok: false, reason: 'statement signature does not verify against signPublicKey' };
  }
  return { ok: true };
}

/**
 * Hearth's device credential: 0x01 ‖ root public key ‖ device ‖ sign key ‖ KEM key ‖ u32le key epoch
 * ‖ u32le device epoch ‖ root signature over `domain_hash("calimero.device.cert.v1", [those fields])`.
 * It carries the root key, so anyone can re-derive the account and verify it from the bytes alone.
 */
export function encodeCredential(
  f: { rootPublicKey: string; deviceId: string; signPublicKey: string; kemPublicKey: string; deviceEpoch: number },
  signWithRoot: (m: Uint8Array) => string,
): string {
  const epochs = Buffer.alloc(8);
  epochs.writeUInt32LE(0, 0);
  epochs.writeUInt32LE(f.deviceEpoch, 4);
  const fields = [hex(f.rootPublicKey), hex(f.deviceId), hex(f.signPublicKey), hex(f.kemPublicKey), epochs];
  const sig = signWithRoot(domainHash('calimero.device.cert.v1', fields));
  return Buffer.concat([Buffer.from([1]), ...fields, hex(sig)]).toString('hex');
}
