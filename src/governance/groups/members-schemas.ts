/**
 * Request schemas of the membership and tree routes (admin-wire-b §4.4–§4.15, §4.18). Ids are
 * checked by `requireId` in the routes (400 naming the field); roles are any of the five wire
 * spellings here so that a TEE role reaches the service and gets its own 400 message.
 */
import { Type } from 'typebox';
import { Data, Hex32 } from '../../http/response-schemas.ts';
import { ROLES, type Role } from '../types.ts';

// typed as `Role`: a union built from a list loses its literal types
const RoleName = Type.Unsafe<Role>(Type.Union(ROLES.map((r) => Type.Literal(r))));

const GroupId = Type.String({ description: 'group (or namespace) id: 64 hex, base58 accepted' });
export const MemberParams = Type.Object({ groupId: GroupId, account: Type.String({ description: 'member account id: 64 hex' }) });
export const ContextParams = Type.Object({ groupId: GroupId, contextId: Type.String({ description: 'context id: 64 hex, base58 accepted' }) });

export const AddMembersRequest = Type.Object({
  members: Type.Array(Type.Object({ identity: Type.String(), role: RoleName }), { minItems: 1 }),
});

export const RemoveMembersRequest = Type.Object({
  members: Type.Array(Type.String(), { minItems: 1 }),
});

export const UpdateRoleRequest = Type.Object({ role: RoleName });

export const AutoFollowRequest = Type.Object({
  autoFollowContexts: Type.Boolean(),
  autoFollowSubgroups: Type.Boolean(),
});

export const ReparentRequest = Type.Object({ newParentId: Type.String() });

/** offset/limit arrive as strings; parsed in the route so a bad value is a 400 naming it */
export const MemberDevicesQuery = Type.Object({
  offset: Type.Optional(Type.String({ description: 'non-negative integer; default 0' })),
  limit: Type.Optional(Type.String({ description: 'non-negative integer; default 100, clamped to 1..1000' })),
});

// ---- responses (flat vs enveloped as admin-wire-b §1.2) ---------------------------------------------

const Named = { name: Type.Optional(Type.String()) };

/** `{"members": [...]}` (flat): direct and inherited members; an inherited one reports its anchor's role. */
export const MembersAnswer = Type.Object({
  members: Type.Array(Type.Object({ identity: Hex32('the member account'), role: RoleName, ...Named })),
});

/** `{"members": [...]}` (flat): an admin sees every member, a plain member only its own entry. */
export const MemberDevicesAnswer = Type.Object({
  members: Type.Array(
    Type.Object({
      account: Hex32(),
      devices: Type.Array(Type.Object({ deviceId: Hex32(), signingKey: Hex32() }), { description: 'empty for accounts whose bindings this node has not seen' }),
    }),
  ),
});

export const ContextsAnswer = Data(Type.Array(Type.Object({ contextId: Hex32(), ...Named }), { description: 'every context registered in the group' }));
export const SubgroupsAnswer = Type.Object({ subgroups: Type.Array(Type.Object({ groupId: Hex32(), ...Named }), { description: 'direct children' }) });
export const DeletedAnswer = Data(Type.Object({ isDeleted: Type.Boolean() }));
export const ReparentedAnswer = Type.Object({ reparented: Type.Boolean() });
export const JoinViaInheritanceAnswer = Data(
  Type.Object({
    groupId: Hex32(),
    memberPublicKey: Hex32('this node’s signing key'),
    wasInherited: Type.Boolean({ description: 'false: already a direct member, nothing changed' }),
  }),
);
