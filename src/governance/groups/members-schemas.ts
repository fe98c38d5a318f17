/**
 * Request schemas of the membership and tree routes (admin-wire-b §4.4–§4.15, §4.18). Ids are
 * checked by `requireId` in the routes (400 naming the field); roles are any of the five wire
 * spellings here so that a TEE role reaches the service and gets its own 400 message.
 */
import { Type } from 'typebox';
import { ROLES } from '../types.ts';

const RoleName = Type.Union(ROLES.map((r) => Type.Literal(r)));

export { GroupParams } from './schemas.ts';
export const MemberParams = Type.Object({ groupId: Type.String(), account: Type.String() });
export const ContextParams = Type.Object({ groupId: Type.String(), contextId: Type.String() });

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
  offset: Type.Optional(Type.String()),
  limit: Type.Optional(Type.String()),
});
