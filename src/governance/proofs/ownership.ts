/**
 * Ownership claims (admin-wire-b §4.20): a node that is a direct admin of a group signs, with its
 * signing key, a short-lived statement that `subject` owns a context of that group (or, for the
 * namespace variant, the namespace). Relying parties verify Ed25519 over
 * `OWNERSHIP_PROOF_DOMAIN ‖ signedPayload`; the payload is UTF-8 JSON whose key order is part of
 * the contract (the reference serialises a struct in declaration order, and verifiers compare bytes).
 */
import { badRequest } from '../../errors.ts';
import { OWNERSHIP_PROOF_DOMAIN_TEXT, type OwnershipClaim, type OwnershipProof } from '../../wire/ownership.ts';

/** The 28-byte domain prefix of the signed bytes (reference `OWNERSHIP_PROOF_DOMAIN`). */
export const OWNERSHIP_PROOF_DOMAIN = Buffer.from(OWNERSHIP_PROOF_DOMAIN_TEXT, 'utf8');
/** Issued proofs live at most this long: `expires_at_ms` is clamped to issue time + 5 min. */
export const MAX_PROOF_LIFETIME_MS = 5 * 60 * 1000;
export const MAX_AUDIENCE_BYTES = 256;
export const MAX_SUBJECT_BYTES = 512;
/** nonce: hex, 32–128 characters (16–64 bytes), even length */
const NONCE = /^(?:[0-9a-fA-F]{2}){16,64}$/;

/** The claim and the proof are the wire's shapes (src/wire/ownership.ts). */
export type ProofClaim = OwnershipClaim;

/** A refusal of the claim itself (reference `OwnershipProofInvalid` → 400). */
export const proofInvalid = (reason: string) => badRequest(`ownership proof invalid: ${reason}`);

function checkText(name: string, value: string, max: number): void {
  if (value.length === 0) throw proofInvalid(`\`${name}\` must not be empty`);
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > max) throw proofInvalid(`\`${name}\` is ${bytes} bytes; maximum is ${max}`);
  // control characters would render ambiguously across verifiers (reference)
  if (/\p{Cc}/u.test(value)) throw proofInvalid(`\`${name}\` must not contain control characters`);
}

/** The request's claim fields, checked before any authority or state is looked at. */
export function validateClaim(c: ProofClaim): void {
  checkText('audience', c.audience, MAX_AUDIENCE_BYTES);
  checkText('subject', c.subject, MAX_SUBJECT_BYTES);
  if (!NONCE.test(c.nonce)) throw proofInvalid('`nonce` must be hex of 32 to 128 characters, even length');
  if (!Number.isInteger(c.expiresAtMs) || c.expiresAtMs < 0) throw proofInvalid('`expiresAtMs` must be a non-negative integer');
}

export interface PayloadInput {
  claim: ProofClaim;
  groupId: string;
  /** the node's signing key (hex): `issuer_identity`, equal to the response's `signerPublicKey` */
  issuer: string;
  /** hex context id; the empty string in a namespace proof (reference) */
  contextId: string;
  nowMs: number;
}

/** The payload bytes, `expires_at_ms` clamped to `nowMs + 5 min`; 400 when it is not in the future. */
export function ownershipPayload(p: PayloadInput): Buffer {
  const expires = Math.min(p.claim.expiresAtMs, p.nowMs + MAX_PROOF_LIFETIME_MS);
  if (expires <= p.nowMs) throw proofInvalid('expires_at_ms must be in the future');
  // key order is the contract: v, audience, group_id, issuer_identity, context_id, subject, nonce, issued_at_ms, expires_at_ms
  const payload = {
    v: 1,
    audience: p.claim.audience,
    group_id: p.groupId,
    issuer_identity: p.issuer,
    context_id: p.contextId,
    subject: p.claim.subject,
    nonce: p.claim.nonce,
    issued_at_ms: p.nowMs,
    expires_at_ms: expires,
  };
  return Buffer.from(JSON.stringify(payload), 'utf8');
}

/** Signs `domain ‖ payload` with the node's key (`sign` answers hex) and shapes the flat response. */
export function signOwnership(payload: Buffer, signer: string, sign: (m: Uint8Array) => string): OwnershipProof {
  const signature = Buffer.from(sign(Buffer.concat([OWNERSHIP_PROOF_DOMAIN, payload])), 'hex');
  return { signerPublicKey: signer, signedPayload: payload.toString('base64'), signature: signature.toString('base64') };
}
