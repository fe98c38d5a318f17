/** Request schemas of the invitation routes (admin-wire-b §2.7–§2.8, §4.16–§4.17). */
import { Type } from 'typebox';

/** The invitation itself is checked by `parseInvitation` (400 naming the field), so it is `unknown` here. */
export const JoinRequest = Type.Object({
  invitation: Type.Unknown(),
  groupName: Type.Optional(Type.String()),
});

export { GroupParams } from '../groups/schemas.ts';
export { NamespaceParams } from '../namespaces/schemas.ts';
