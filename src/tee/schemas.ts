/**
 * Request and response schemas of the TEE routes (admin spec "TEE resources"; admin-wire-b §9).
 * The reference closes the request bodies (`deny_unknown_fields`); the spec does not order a
 * refusal, so older clients' extra fields are accepted and ignored (reference README rule 3).
 * Value rules (the nonce's 32 bytes, ids) live in `service.ts`, so a 400 names the rule broken.
 */
import { Type } from 'typebox';
import { Data, Hex32 } from '../http/response-schemas.ts';

export const TeeAttestRequest = Type.Object({
  nonce: Type.String({ description: '32 bytes as 64 hex: the first half of the report data' }),
  applicationId: Type.Optional(Type.String({ description: 'bind the installed bundle of this application' })),
  bindNodeKey: Type.Optional(Type.Boolean({ description: 'bind this node’s signing key' })),
  bindTransportKey: Type.Optional(Type.Boolean({ description: 'refused (409): no separate transport key' })),
  includeCollateral: Type.Optional(Type.Boolean({ description: 'ask the provider for verification collateral' })),
});

export const TeeRegistrationAttestRequest = Type.Object({
  nonce: Type.String({ description: '32 bytes as 64 hex' }),
});

export const TeeInfoAnswer = Data(
  Type.Object({
    cloudProvider: Type.String({ description: '`unknown` without a TEE' }),
    osImage: Type.String(),
    mrtd: Type.String({ description: 'the launch measurement, hex' }),
  }),
);

export const TeeAttestAnswer = Data(
  Type.Object({
    quoteB64: Type.String({ description: 'the raw quote, base64' }),
    quote: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'the quote decoded, when the provider decodes it' })),
    boundPublicKey: Type.Optional(Hex32('the node signing key bound into the report data')),
    collateral: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  }),
);
