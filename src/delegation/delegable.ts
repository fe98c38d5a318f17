/**
 * The ops a governance intent may carry (admin-wire-b §8.5: "GroupOp (kind Group) or RootOp (kind
 * Root), delegable form"). hearth's governance ops are its own (src/governance), so the delegable
 * form is hearth's: the UTF-8 JSON `{"kind": <op kind>, "groupId"?: <group>, "body": {…}}`, exactly
 * the op a member's own node would publish, which the warrant's `op_hash` commits to byte for byte.
 *
 * - Group plane (warrant kind `Group`, scope = the group): membership, roles, capabilities,
 *   settings, metadata, leaving, detaching and deleting contexts — published on the scope group.
 * - Root plane (warrant kind `Root`, scope = the namespace): creating, moving and deleting subgroups
 *   — published on the group the op names (`groupId`).
 * Anything else (namespace lifecycle, owner and TEE ops, invitations, context registration — which
 * has its own intent — and delegated ops themselves) is not delegable. Each body is checked against
 * its schema before any applier reads it: the bytes come from a caller, or from a peer.
 */
import { Type, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { badRequest, forbidden } from '../errors.ts';
import type { GovernanceKind } from './warrants.ts';

const Id = Type.String({ pattern: '^[0-9a-f]{64}$' });
const Role = Type.Union([Type.Literal('Admin'), Type.Literal('Member'), Type.Literal('ReadOnly'), Type.Literal('ReadOnlyTee'), Type.Literal('RelayTee')]);
const Mask = Type.Integer({ minimum: 0, maximum: 0xffffffff });

const GROUP_PLANE: Record<string, TSchema> = {
  'group.member_added': Type.Object({ members: Type.Array(Type.Object({ account: Id, role: Role }), { minItems: 1, maxItems: 256 }) }),
  'group.member_removed': Type.Object({ members: Type.Array(Id, { minItems: 1, maxItems: 256 }) }),
  'group.member_role_set': Type.Object({ account: Id, role: Role }),
  'group.member_auto_follow_set': Type.Object({ account: Id, contexts: Type.Boolean(), subgroups: Type.Boolean() }),
  'group.member_left': Type.Object({}),
  'group.member_joined_open': Type.Object({}),
  'group.context_detached': Type.Object({ contextId: Id }),
  'context.deregistered': Type.Object({ contextId: Id }),
  'member.capabilities.set': Type.Object({ account: Id, capabilities: Mask }),
  'group.default-capabilities.set': Type.Object({ defaultCapabilities: Mask }),
  'group.subgroup-visibility.set': Type.Object({ subgroupVisibility: Type.Union([Type.Literal('open'), Type.Literal('restricted')]) }),
  'metadata.set': Type.Union([
    Type.Object({ target: Type.Literal('group'), name: Type.Optional(Type.String()), data: Type.Record(Type.String(), Type.String()) }),
    Type.Object({ target: Type.Literal('member'), account: Id, name: Type.Optional(Type.String()), data: Type.Record(Type.String(), Type.String()) }),
    Type.Object({ target: Type.Literal('context'), contextId: Id, name: Type.Optional(Type.String()), data: Type.Record(Type.String(), Type.String()) }),
  ]),
};

const ROOT_PLANE: Record<string, TSchema> = {
  'group.created': Type.Object({
    groupId: Id,
    parentId: Id,
    salt: Id,
    visibility: Type.Union([Type.Literal('open'), Type.Literal('restricted')]),
    name: Type.Optional(Type.String({ maxLength: 256 })),
    applicationId: Type.Optional(Id),
    appKey: Type.Optional(Id),
  }),
  'group.reparented': Type.Object({ newParentId: Id }),
  'group.cascade_deleted': Type.Object({ groupIds: Type.Array(Id, { maxItems: 1024 }) }),
};

/** A decoded delegable op; `groupId` is the group it is published on. */
export interface DelegableOp {
  kind: string;
  groupId: string;
  body: Record<string, unknown>;
}

/**
 * Decodes and checks the op bytes for a warrant of `plane` scoped to `scope` (the group for a Group
 * op, the namespace for a Root op). 400 for bytes that are not an op; 403 for an op this warrant
 * cannot carry.
 */
export function decodeDelegableOp(bytes: Uint8Array, plane: GovernanceKind, scope: string): DelegableOp {
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (err) {
    throw badRequest(`op is not a delegable op (UTF-8 JSON {kind, groupId?, body}): ${(err as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw badRequest('op must be a JSON object {kind, groupId?, body}');
  const { kind, groupId, body } = raw as Record<string, unknown>;
  if (typeof kind !== 'string') throw badRequest('op.kind must be a string');
  if (groupId !== undefined && (typeof groupId !== 'string' || !/^[0-9a-f]{64}$/.test(groupId))) throw badRequest('op.groupId must be 64 hex characters');
  const table = plane === 'Group' ? GROUP_PLANE : ROOT_PLANE;
  const schema = table[kind];
  if (!schema) {
    const other = plane === 'Group' ? ROOT_PLANE[kind] : GROUP_PLANE[kind];
    throw forbidden(other ? `op ${kind} is on the ${plane === 'Group' ? 'Root' : 'Group'} plane; this warrant is for the ${plane} plane` : `op ${kind} is not delegable`);
  }
  if (!Value.Check(schema, body)) {
    const first = [...Value.Errors(schema, body)][0];
    throw badRequest(`op.body does not fit ${kind}${first ? `: ${first.instancePath || '/'} ${first.message}` : ''}`);
  }
  if (plane === 'Group') {
    if (groupId !== undefined && groupId !== scope) throw forbidden(`op.groupId ${groupId} is not the warrant's scope ${scope}`);
    return { kind, groupId: scope, body: body as Record<string, unknown> };
  }
  if (groupId === undefined) throw badRequest(`op.groupId is required for ${kind}: the group the op acts on`);
  return { kind, groupId, body: body as Record<string, unknown> };
}
