/**
 * The ops that create things: a namespace (its genesis, admin-wire-b §2.3) and a subgroup
 * (§4.2). Ids are derived, never chosen: a namespace from (founder, salt), a subgroup from
 * (creator, parent, restricted, salt), and an op whose id does not re-derive is refused.
 */
import { badRequest, conflict, forbidden } from '../errors.ts';
import { accountIdOf, namespaceIdOf, subgroupIdOf } from '../crypto/ids.ts';
import { recordAccountRoot } from './proofs/roots.ts';
import type { ApplierRegistry } from './appliers.ts';
import { ancestry, isAdmin, requireCapability } from './authority.ts';
import { CAP, type GroupState, type NamespaceState } from './types.ts';

export interface NamespaceGenesis {
  salt: string;
  applicationId: string;
  appKey: string;
  name?: string;
  /** the founder's root public key, recorded for sealing (proofs/roots.ts); must derive the founder's account */
  founderRootKey?: string;
}

export interface SubgroupBody {
  groupId: string;
  parentId: string;
  salt: string;
  visibility: 'open' | 'restricted';
  name?: string;
  applicationId?: string;
  appKey?: string;
}

export function newGroup(fields: Pick<GroupState, 'id' | 'namespaceId' | 'parentId' | 'owner' | 'targetApplicationId' | 'appKey' | 'createdAt'> & { name?: string; visibility: 'open' | 'restricted'; joinedAt: number }): GroupState {
  return {
    id: fields.id,
    namespaceId: fields.namespaceId,
    parentId: fields.parentId,
    name: fields.name,
    owner: fields.owner,
    ownerOpCounter: '0',
    members: {
      [fields.owner]: { role: 'Admin', autoFollow: { contexts: true, subgroups: false }, metadata: null, joinedAt: fields.joinedAt },
    },
    defaultCapabilities: CAP.CAN_JOIN_OPEN_SUBGROUPS,
    subgroupVisibility: fields.visibility,
    metadata: null,
    contexts: {},
    targetApplicationId: fields.targetApplicationId,
    appKey: fields.appKey,
    createdAt: fields.createdAt,
  };
}

/** The empty state a genesis op applies to. */
export function emptyNamespace(id: string, founder: string, g: NamespaceGenesis, createdAt: number): NamespaceState {
  return {
    id,
    name: g.name,
    founding: { founderAccountId: founder, salt: g.salt },
    targetApplicationId: g.applicationId,
    appKey: g.appKey,
    createdAt,
    groups: {},
    seq: '0',
    heads: [],
    nonces: {},
  };
}

export function registerGenesisOps(registry: ApplierRegistry): void {
  registry.register('namespace.created', ({ ns, op, emit }) => {
    const body = op.body as unknown as NamespaceGenesis;
    if (ns.seq !== '0') throw conflict(`namespace '${ns.id}' already exists`);
    if (namespaceIdOf(op.account, body.salt) !== op.namespaceId) throw badRequest('namespace id does not derive from its founder and salt');
    if (body.founderRootKey !== undefined) {
      if (!/^[0-9a-f]{64}$/.test(body.founderRootKey) || accountIdOf(Buffer.from(body.founderRootKey, 'hex')) !== op.account) {
        throw badRequest("founderRootKey does not derive the founder's account");
      }
      recordAccountRoot(ns, body.founderRootKey);
    }
    ns.groups[ns.id] = newGroup({
      id: ns.id,
      namespaceId: ns.id,
      parentId: null,
      name: body.name,
      owner: op.account,
      targetApplicationId: body.applicationId,
      appKey: body.appKey,
      createdAt: Math.floor(op.timestampMs / 1000),
      visibility: 'open',
      joinedAt: op.timestampMs,
    });
    emit(ns.id, 'MemberJoined', { memberAccount: op.account, role: 'Admin' });
  });

  registry.register('group.created', ({ ns, op, emit }) => {
    const body = op.body as unknown as SubgroupBody;
    const parent = ns.groups[body.parentId];
    if (!parent) throw badRequest(`parent group '${body.parentId}' is not in namespace '${ns.id}'`);
    if (ns.groups[body.groupId]) throw conflict(`group '${body.groupId}' already exists`);
    const expected = subgroupIdOf(op.account, body.parentId, body.visibility === 'restricted', body.salt);
    if (expected !== body.groupId) throw badRequest('group id does not derive from its creator, parent and salt');
    const ancestorAdmin = ancestry(ns, parent).some((g) => isAdmin(g, op.account));
    if (!ancestorAdmin) {
      if (parent.parentId !== null) throw forbidden('only a namespace admin may create a subgroup below the first level');
      requireCapability(ns, parent, op.account, 'CAN_CREATE_SUBGROUP');
    }
    ns.groups[body.groupId] = newGroup({
      id: body.groupId,
      namespaceId: ns.id,
      parentId: body.parentId,
      name: body.name,
      owner: op.account,
      targetApplicationId: body.applicationId ?? parent.targetApplicationId,
      appKey: body.appKey ?? parent.appKey,
      createdAt: Math.floor(op.timestampMs / 1000),
      visibility: body.visibility,
      joinedAt: op.timestampMs,
    });
    emit(body.groupId, 'MemberJoined', { memberAccount: op.account, role: 'Admin' });
  });
}
