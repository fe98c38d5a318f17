/**
 * Response schemas of the namespace routes (admin spec "Namespaces"; admin-wire-b §2): the wire
 * shapes the OpenAPI document shows and the conformance tests check. Every answer here is a `{data}`
 * envelope, except leave and the admin change, which answer an empty 200 (spec "none").
 */
import { Type } from 'typebox';
import { Data, Hex32, U64 } from '../../http/response-schemas.ts';
import { InvitationAnswer } from '../invitations/schemas.ts';

const Count = (description: string) => Type.Integer({ minimum: 0, description });

const Founding = Type.Object(
  { founderAccountId: Hex32('the founding account'), salt: Hex32('random salt; the id derives from founder and salt') },
  { description: 'present on every node that applied the genesis' },
);

/** The Namespace resource (§2.1); a namespace is its root group, `namespaceId` = root group id. */
export const NamespaceSchema = Type.Object(
  {
    namespaceId: Hex32(),
    appKey: Hex32('the bytecode blob id the namespace pins (zeros while unresolved)'),
    targetApplicationId: Hex32('the application id'),
    createdAt: U64('unix seconds'),
    name: Type.Optional(Type.String({ description: 'omitted when unset' })),
    memberCount: Count('effective members of the root group'),
    contextCount: Count('contexts registered in any group of the namespace'),
    subgroupCount: Count('groups below the root'),
    founding: Founding,
  },
  { description: 'Namespace' },
);

export const CreateNamespaceAnswer = Data(Type.Object({ namespaceId: Hex32(), founding: Founding }));
export const NamespaceAnswer = Data(NamespaceSchema);
export const NamespaceListAnswer = Data(Type.Array(NamespaceSchema), 'the namespaces in the session\'s scope (the hidden account namespace is never listed)');
export const DeletedAnswer = Data(Type.Object({ isDeleted: Type.Literal(true) }));

export const SubgroupListAnswer = Data(
  Type.Array(Type.Object({ groupId: Hex32(), name: Type.Optional(Type.String({ description: 'omitted when unset' })) })),
  'every group below the root, parents before children',
);
export const SubgroupCreatedAnswer = Data(Type.Object({ groupId: Hex32('derived from the creator, the parent, the visibility and a salt') }));

const KeyRotation = Type.Object({ namespaceId: Hex32(), keyRotated: Type.Boolean() });

export const RevokeDeviceAnswer = Data(
  Type.Object({
    accountId: Hex32(),
    deviceId: Hex32(),
    keyRotated: Type.Boolean({ description: 'for the namespace in the path; false = the device stopped writing, the key is not rotated yet' }),
    revokedIn: Type.Array(KeyRotation, { description: 'every namespace the revocation was published into' }),
  }),
);

export const LinkDeviceAnswer = Data(Type.Object({ accountId: Hex32(), deviceId: Hex32(), alreadyBound: Type.Boolean() }));
export const AdmitAnswer = Data(Type.Object({ published: Type.Literal(true) }));

/** Single (`{invitation, groupName?}`) or, with `recursive: true`, one invitation per group. */
export const NamespaceInviteAnswer = Data(
  Type.Union([
    InvitationAnswer,
    Type.Object({ invitations: Type.Array(Type.Object({ groupId: Hex32(), ...InvitationAnswer.properties })) }),
  ]),
);

export const JoinNamespaceAnswer = Data(
  Type.Object({
    namespaceId: Hex32(),
    groupId: Hex32('the same id as `namespaceId`: a compatibility alias for clients that predate the rc.25 rename (docs/decisions.md)'),
    memberIdentity: Hex32("this node's signing key"),
    memberAccount: Hex32("this node's account"),
  }),
);
