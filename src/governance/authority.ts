/**
 * Who may do what in a group (domain.md §4.3–§4.4): admins pass every capability check; a member's
 * mask is its override, else the group default; membership of an open subgroup is inherited from
 * the nearest ancestor where the account has a direct row, if that row may join open subgroups.
 * Inherited membership is computed when asked, never stored.
 */
import { forbidden, notFound } from '../errors.ts';
import { ALL_CAPS, CAP, type GroupState, type MemberState, type NamespaceState } from './types.ts';
import type { CapabilityName } from '../wire/capabilities.ts';

export function groupOf(ns: NamespaceState, groupId: string): GroupState {
  const g = ns.groups[groupId];
  if (!g) throw notFound(`group '${groupId}' not found`);
  return g;
}

export function isAdmin(group: GroupState, account: string): boolean {
  return group.members[account]?.role === 'Admin';
}

/** The anchor row an account inherits an open subgroup's membership from, walking up open groups. */
export function inheritedAnchor(ns: NamespaceState, group: GroupState, account: string): { anchor: GroupState; row: MemberState } | undefined {
  let g: GroupState | undefined = group;
  while (g && g.subgroupVisibility === 'open' && g.parentId) {
    const parent: GroupState | undefined = ns.groups[g.parentId];
    if (!parent) return undefined;
    const row = parent.members[account];
    if (row) return { anchor: parent, row };
    g = parent;
  }
  return undefined;
}

/**
 * Admins pass every management check, but CAN_AUTHOR_ON_BEHALF is never implied by admin
 * (admin-wire-b §6.1): it comes only from the admin's own mask.
 */
function adminMask(own: number): number {
  return (ALL_CAPS & ~CAP.CAN_AUTHOR_ON_BEHALF) | (own & CAP.CAN_AUTHOR_ON_BEHALF);
}

/** The effective capability mask of an account in a group; undefined when it is not a member. */
export function effectiveCapabilities(ns: NamespaceState, group: GroupState, account: string): number | undefined {
  const row = group.members[account];
  if (row) return row.role === 'Admin' ? adminMask(row.capabilities ?? group.defaultCapabilities) : (row.capabilities ?? group.defaultCapabilities);
  const inherited = inheritedAnchor(ns, group, account);
  if (!inherited) return undefined;
  if (inherited.row.role === 'Admin') return adminMask(group.defaultCapabilities);
  const anchorMask = inherited.row.capabilities ?? inherited.anchor.defaultCapabilities;
  return anchorMask & CAP.CAN_JOIN_OPEN_SUBGROUPS ? group.defaultCapabilities : undefined;
}

export function isMember(ns: NamespaceState, group: GroupState, account: string): boolean {
  return effectiveCapabilities(ns, group, account) !== undefined;
}

export function requireMember(ns: NamespaceState, group: GroupState, account: string): void {
  if (!isMember(ns, group, account)) throw forbidden(`account ${account} is not a member of group '${group.id}'`);
}

export function requireAdmin(group: GroupState, account: string): void {
  if (!isAdmin(group, account)) throw forbidden(`only an admin of group '${group.id}' may do this; account ${account} is not one`);
}

/** Admins pass; others need the named capability in the group. */
export function requireCapability(ns: NamespaceState, group: GroupState, account: string, cap: CapabilityName): void {
  const mask = effectiveCapabilities(ns, group, account);
  if (mask === undefined) throw forbidden(`account ${account} is not a member of group '${group.id}'`);
  if ((mask & CAP[cap]) === 0) throw forbidden(`account ${account} lacks the ${cap} capability in group '${group.id}'`);
}

/** The group and its ancestors, nearest first. */
export function ancestry(ns: NamespaceState, group: GroupState): GroupState[] {
  const out: GroupState[] = [];
  for (let g: GroupState | undefined = group; g; g = g.parentId ? ns.groups[g.parentId] : undefined) out.push(g);
  return out;
}

/**
 * A lookup of a group's way up: the group and its ancestors, nearest first, with whether each is
 * open (undefined for an unknown group). What a client key bound to a group needs to reach that
 * group's open subgroups (auth/binding.ts `mayActOn`).
 */
export function groupPathVia(locate: (groupId: string) => { ns: NamespaceState; group: GroupState } | undefined) {
  return (groupId: string): { id: string; open: boolean }[] | undefined => {
    const found = locate(groupId);
    return found && ancestry(found.ns, found.group).map((g) => ({ id: g.id, open: g.subgroupVisibility === 'open' }));
  };
}

/** Direct children of a group. */
export function childrenOf(ns: NamespaceState, groupId: string): GroupState[] {
  return Object.values(ns.groups).filter((g) => g.parentId === groupId);
}

/** The group and every descendant, parents before children. */
export function subtree(ns: NamespaceState, groupId: string): GroupState[] {
  const out: GroupState[] = [];
  const walk = (id: string) => {
    const g = ns.groups[id];
    if (!g) return;
    out.push(g);
    for (const c of childrenOf(ns, id)) walk(c.id);
  };
  walk(groupId);
  return out;
}
