/**
 * Request schemas of the seal and ownership-proof routes (admin-wire-b §4.19–§4.20). The reference
 * closes these bodies (`deny_unknown_fields`), so an unknown field is a 400 here too. Value rules
 * (hex, lengths, the clamp) live in `service.ts` / `ownership.ts`, so the 400s name the rule broken.
 */
import { Type } from 'typebox';

export const SealParams = Type.Object({ groupId: Type.String(), account: Type.String() });
export { GroupParams } from '../groups/schemas.ts';

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
