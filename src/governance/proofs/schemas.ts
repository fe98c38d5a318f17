/**
 * Request and response schemas of the seal and ownership-proof routes (admin-wire-b §4.19–§4.20).
 * The reference closes these bodies (`deny_unknown_fields`), so an unknown field is a 400 here too.
 * Value rules (hex, lengths, the clamp) live in `service.ts` / `ownership.ts`, so the 400s name the
 * rule broken. Response schemas document the wire (OpenAPI); they never drive serialisation.
 */
import { Type } from 'typebox';
import { Data, Hex32 } from '../../http/response-schemas.ts';

export const SealParams = Type.Object({
  groupId: Type.String({ description: 'group (or namespace) id: 64 hex, base58 accepted' }),
  account: Type.String({ description: 'the recipient account: 64 hex' }),
});

export const SealToAccountRequest = Type.Object({ plaintext: Type.String() }, { additionalProperties: false });

const claim = {
  audience: Type.String(),
  subject: Type.String(),
  nonce: Type.String(),
  /** u64 unix milliseconds; clamped to issue time + 5 min, so a value past 2^53 needs no exactness */
  expiresAtMs: Type.Integer({ minimum: 0 }),
};

export const IssueOwnershipProofRequest = Type.Object({ ...claim, contextId: Type.String() }, { additionalProperties: false });
export const IssueNamespaceOwnershipProofRequest = Type.Object(claim, { additionalProperties: false });

// ---- responses (admin-wire-b §4.19–§4.20) -----------------------------------------------------------

const Hex = (description: string) => Type.String({ pattern: '^([0-9a-f]{2})*$', description });
const Base64 = (description: string) => Type.String({ pattern: '^[A-Za-z0-9+/]*={0,2}$', description });

/** `{"data": SealedEnvelope}`: byte fields are lowercase hex. */
export const SealedEnvelopeAnswer = Data(
  Type.Object({
    accountRootEpoch: Type.Integer({ minimum: 0, description: 'the epoch of the root key sealed to' }),
    ephemeralPublicKey: Hex32('X25519 ephemeral public key'),
    nonce: Type.String({ pattern: '^[0-9a-f]{24}$', description: '12-byte AES-GCM nonce' }),
    ciphertext: Hex('the ciphertext followed by the 16-byte GCM tag'),
  }),
);

const proof = {
  signerPublicKey: Hex32('this node’s signing key'),
  signedPayload: Base64('base64 of the UTF-8 JSON claim (key order is part of the contract)'),
  signature: Base64('base64 of the 64-byte Ed25519 signature over "calimero.ownership-claim.v1\\0" ‖ payload'),
};

/** Flat (no envelope), as the reference answers. */
export const OwnershipProofAnswer = Type.Object(proof);
export const NamespaceOwnershipProofAnswer = Type.Object({
  ...proof,
  founding: Type.Object({ founderAccountId: Hex32(), salt: Hex32('the founding salt: the namespace id derives from (founder, salt)') }),
  credential: Hex('this node’s device credential, binding signerPublicKey to the founder’s root'),
});
