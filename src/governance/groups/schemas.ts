/** Request schemas of the group routes (admin-wire-b §4). */
import { Type } from 'typebox';
import { Hex64 } from '../namespaces/schemas.ts';

/**
 * `groupId` is refused (ids are derived: admin spec, README rule 3); every other field older
 * clients send (`upgradePolicy`, ...) is accepted and ignored.
 */
export const CreateGroupRequest = Type.Object({
  applicationId: Hex64,
  appKey: Type.Optional(Hex64),
  bytecodeId: Type.Optional(Hex64),
  name: Type.Optional(Type.String()),
  parentGroupId: Type.Optional(Hex64),
  visibility: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('restricted')])),
});

export const GroupParams = Type.Object({ groupId: Type.String() });
