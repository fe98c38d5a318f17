/** Request schemas of the group routes (admin-wire-b §4). */
import { Type } from 'typebox';

const Hex64 = Type.String({ pattern: '^[0-9a-fA-F]{64}$|^[1-9A-HJ-NP-Za-km-z]{32,44}$' });

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
