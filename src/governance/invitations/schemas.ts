/** Request and response schemas of the invitation routes (admin-wire-b §2.7–§2.8, §4.16–§4.17). */
import { Type } from 'typebox';
import { Hex32, U64 } from '../../http/response-schemas.ts';

/** The invitation itself is checked by `parseInvitation` (400 naming the field), so it is `unknown` here. */
export const JoinRequest = Type.Object({
  invitation: Type.Unknown(),
  groupName: Type.Optional(Type.String()),
});

/** The optional invite body (§2.7), parsed by the handler (`inviteBody`): documented, not validated. */
export const CreateInvitationDoc = Type.Object(
  {
    expirationTimestamp: Type.Optional(Type.Integer({ minimum: 0, description: 'a duration in seconds (default and maximum 86 400)' })),
    recursive: Type.Optional(Type.Boolean({ description: 'namespace invite only: one invitation per group the inviter may invite to' })),
    admitters: Type.Optional(Type.Array(Type.String(), { description: 'accounts (64 hex) allowed to admit a claim; absent = the admins' })),
    admitterAddrs: Type.Optional(Type.Array(Type.String(), { description: 'libp2p multiaddrs of the admitters (unsigned)' })),
  },
  { description: 'optional: no body, an empty body or {} mean the defaults' },
);

// ---- responses (documentation and conformance tests; serialisation stays exact) ---------------

const Bytes32 = (description: string) =>
  Type.Array(Type.Integer({ minimum: 0, maximum: 255 }), { minItems: 32, maxItems: 32, description: `${description} (32 bytes as integers)` });

/** SignedGroupOpenInvitation (§2.7): snake_case, some values as 32-integer arrays; pass it through verbatim. */
export const SignedInvitationSchema = Type.Object(
  {
    invitation: Type.Object(
      {
        inviter_identity: Bytes32("the inviter's signing key"),
        group_id: Bytes32('the invited group'),
        expiration_timestamp: U64('absolute unix seconds'),
        secret_salt: Bytes32('per-invitation nonce'),
        invited_role: Type.Integer({ minimum: 0, maximum: 2, description: '0 Admin, 1 Member, 2 ReadOnly' }),
        admitters: Type.Array(Hex32(), { description: 'accounts allowed to admit a claim (signed)' }),
      },
      { description: 'the signed body' },
    ),
    inviter_signature: Type.String({ pattern: '^[0-9a-f]{128}$', description: 'Ed25519 over SHA-256 of the borsh body, hex' }),
    inviter_account: Type.Optional(Hex32('unsigned bootstrap hint')),
    admitter_addrs: Type.Optional(Type.Array(Type.String(), { description: 'unsigned' })),
    application_id: Type.Optional(Bytes32('unsigned bootstrap hint')),
    app_key: Type.Optional(Bytes32('unsigned bootstrap hint: the bytecode id')),
  },
  { description: 'SignedGroupOpenInvitation' },
);

/** One minted invitation: `{invitation, groupName?}` (inside `data`). */
export const InvitationAnswer = Type.Object({ invitation: SignedInvitationSchema, groupName: Type.Optional(Type.String()) });

/** `POST /groups/join` (§4.17): the joined group and this node's identities (inside `data`). */
export const JoinGroupAnswer = Type.Object({
  groupId: Hex32('the invited group'),
  memberIdentity: Hex32('this node’s signing key'),
  memberAccount: Hex32('this node’s account'),
});

/** hearth-only `POST /groups/{g}/invitations/revoke` (docs/decisions.md): the invitation or its id. */
export const RevokeInvitationRequest = Type.Object(
  {
    invitation: Type.Optional(Type.Unknown({ description: 'the SignedGroupOpenInvitation as minted' })),
    invitationId: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$', description: 'hex SHA-256 of the borsh invitation body' })),
  },
  { additionalProperties: false, description: 'one of invitation or invitationId (both: they must agree)' },
);

export const RevokeInvitationAnswer = Type.Object({
  groupId: Hex32('the group the invitation admits to'),
  invitationId: Hex32('hex SHA-256 of the borsh invitation body'),
  revoked: Type.Literal(true),
});
