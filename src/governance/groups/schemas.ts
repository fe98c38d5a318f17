/**
 * Request and response schemas of the group routes (admin-wire-b §4.2–§4.3). Response schemas
 * document the wire (issue #6, OpenAPI); they never drive serialisation.
 */
import { Type, type TSchema } from 'typebox';
import { Data, Hex32, U64 } from '../../http/response-schemas.ts';
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

export const GroupParams = Type.Object({ groupId: Type.String({ description: 'group (or namespace) id: 64 hex, base58 accepted' }) });

// ---- responses ------------------------------------------------------------------------------------

export const CreateGroupAnswer = Data(Type.Object({ groupId: Hex32('derived by the node') }));

/** admin spec "MetadataRecord" (admin-wire-b §6.6): `name` is null until one is set. */
export const MetadataRecord = Type.Object({
  name: Type.Union([Type.String(), Type.Null()]),
  data: Type.Record(Type.String(), Type.String()),
  updatedAt: U64('unix milliseconds, stamped by the applying node'),
  updatedBy: Hex32('the account that set it'),
});

/** GroupInfo (admin spec "GroupInfo"; admin-wire-b §4.3): exactly its fields; `metadata` only when set. */
export const GroupInfo = Type.Object({
  groupId: Hex32(),
  appKey: Hex32('the bytecode (blob) id the group pins'),
  targetApplicationId: Hex32(),
  memberCount: Type.Integer({ minimum: 0, description: 'direct and inherited effective members' }),
  contextCount: Type.Integer({ minimum: 0 }),
  defaultCapabilities: Type.Integer({ minimum: 0, description: 'u32 capability mask new members receive' }),
  subgroupVisibility: Type.Union([Type.Literal('open'), Type.Literal('restricted')]),
  metadata: Type.Optional(MetadataRecord),
  groupStateHash: Hex32(),
  namespaceId: Hex32('the namespace root; the group itself for a root'),
  ownerOpCounter: U64('the counter the next root proof must name'),
});

/**
 * A GroupInfo field a domain built on governance adds (src/upgrades: `activeUpgrade`), wired by the
 * composition root: its schema (documented as optional) and its value for a group, left out while
 * undefined.
 */
export interface GroupInfoField {
  schema: TSchema;
  read(groupId: string): Promise<unknown>;
}
export type GroupInfoFields = Record<string, GroupInfoField>;

/** GroupInfo's answer schema with the fields other domains add, after governance's own. */
export function groupInfoAnswer(fields: GroupInfoFields = {}) {
  const added = Object.fromEntries(Object.entries(fields).map(([name, f]) => [name, Type.Optional(f.schema)]));
  return Data(Type.Object({ ...GroupInfo.properties, ...added }));
}
