/**
 * Wire views of governance state (admin spec "Namespace", "GroupInfo"; admin-wire-b §2.1, §4.3):
 * camelCase, ids as 64 hex, u64 counters exact (BigInt → bare JSON integers).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical.ts';
import { effectiveCapabilities } from './authority.ts';
import type { GroupState, NamespaceState } from './types.ts';

/** Direct members plus accounts that inherit an open subgroup's membership. */
export function effectiveMembers(ns: NamespaceState, group: GroupState): string[] {
  const accounts = new Set<string>();
  for (const g of Object.values(ns.groups)) for (const a of Object.keys(g.members)) accounts.add(a);
  return [...accounts].filter((a) => effectiveCapabilities(ns, group, a) !== undefined);
}

export function groupStateHash(group: GroupState): string {
  return createHash('sha256').update('hearth.group.state.v1').update(canonicalJson(group)).digest('hex');
}

export function groupInfoView(ns: NamespaceState, group: GroupState) {
  return {
    groupId: group.id,
    appKey: group.appKey,
    targetApplicationId: group.targetApplicationId,
    memberCount: effectiveMembers(ns, group).length,
    contextCount: Object.keys(group.contexts).length,
    defaultCapabilities: group.defaultCapabilities,
    subgroupVisibility: group.subgroupVisibility,
    ...(group.metadata ? { metadata: group.metadata } : {}),
    groupStateHash: groupStateHash(group),
    namespaceId: ns.id,
    ownerOpCounter: BigInt(group.ownerOpCounter),
    // no `name`: GroupInfo has none (spec); a group's name is its metadata's, and subgroup listings carry it
  };
}

export function namespaceView(ns: NamespaceState) {
  const root = ns.groups[ns.id];
  return {
    namespaceId: ns.id,
    appKey: root?.appKey ?? ns.appKey,
    targetApplicationId: root?.targetApplicationId ?? ns.targetApplicationId,
    createdAt: ns.createdAt,
    ...(ns.name !== undefined ? { name: ns.name } : {}),
    memberCount: root ? effectiveMembers(ns, root).length : 0,
    contextCount: Object.values(ns.groups).reduce((n, g) => n + Object.keys(g.contexts).length, 0),
    subgroupCount: root ? Object.keys(ns.groups).length - 1 : 0,
    founding: ns.founding,
  };
}

