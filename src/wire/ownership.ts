/**
 * Ownership proofs and sealed envelopes (admin-wire-b §4.19, §4.20). Imports nothing: see
 * ./index.ts.
 */

/** The domain prefix of the bytes an ownership proof signs (reference `OWNERSHIP_PROOF_DOMAIN`, 28 bytes as UTF-8). */
export const OWNERSHIP_PROOF_DOMAIN_TEXT = 'calimero.ownership-claim.v1\0';

/** SealedEnvelope (admin-wire-b §4.19): byte fields are hex; `ciphertext` ends with the 16-byte GCM tag. */
export interface SealedEnvelope {
  accountRootEpoch: number;
  ephemeralPublicKey: string;
  nonce: string;
  ciphertext: string;
}

/** The claim an ownership proof signs (admin-wire-b §4.20). */
export interface OwnershipClaim {
  audience: string;
  subject: string;
  /** hex, 32–128 characters */
  nonce: string;
  /** unix milliseconds; the node clamps it to issue time + 5 minutes */
  expiresAtMs: number;
}

/** Verify Ed25519 over `"calimero.ownership-claim.v1\0" ‖ base64-decoded signedPayload`. */
export interface OwnershipProof {
  signerPublicKey: string;
  /** base64 of the UTF-8 JSON claim */
  signedPayload: string;
  /** base64 of the 64-byte signature */
  signature: string;
}
