/**
 * Membership and tree ops of a group (admin spec "Groups"; admin-wire-b §4.4–§4.15, §4.18, §1.4
 * refusal mapping, §10.3 event frames; domain.md §4.3–§4.4). Each applier checks the author's
 * (`op.account`) authority against the draft state and refuses with the status the reference maps
 * for that refusal; nothing is persisted when one throws. Membership changes emit the wire's
 * `MemberAdded` / `MemberRemoved` / `MemberJoined` group events.
 */
import { badRequest, conflict, forbidden, notFound } from '../../errors.ts';
import type { ApplierRegistry, ApplyContext } from '../appliers.ts';
import { ancestry, groupOf, isAdmin, isMember, requireAdmin, requireCapability, subtree } from '../authority.ts';
import type { GroupState, MemberState, NamespaceState, Role } from '../types.ts';
import { clearRemoval, recordRemoval } from '../invitations/admission.ts';

export const MEMBER_OPS = {
  added: 'group.member_added',
  removed: 'group.member_removed',
  roleSet: 'group.member_role_set',
  autoFollowSet: 'group.member_auto_follow_set',
  left: 'group.member_left',
  joinedOpen: 'group.member_joined_open',
  contextDetached: 'group.context_detached',
  reparented: 'group.reparented',
  cascadeDeleted: 'group.cascade_deleted',
} as const;

/** Roles an admin may grant; TEE roles come only from attestation (admin-wire-b §4.1). */
export const GRANTABLE_ROLES = ['Admin', 'Member', 'ReadOnly'] as const;
const TEE_ROLES: readonly Role[] = ['ReadOnlyTee', 'RelayTee'];

export function refuseTeeRole(role: string): void {
  if (TEE_ROLES.includes(role as Role)) {
    throw badRequest('TEE roles (ReadOnlyTee, RelayTee) can only be assigned via TEE attestation, not by an admin');
  }
  if (!(GRANTABLE_ROLES as readonly string[]).includes(role)) throw badRequest(`unknown role '${role}'`);
}

export interface AddMembersBody {
  members: { account: string; role: Role }[];
}

function newMember(role: Role, joinedAt: number): MemberState {
  return { role, autoFollow: { contexts: true, subgroups: false }, metadata: null, joinedAt };
}

function adminCount(group: GroupState): number {
  return Object.values(group.members).filter((m) => m.role === 'Admin').length;
}

/** A direct row, else 409 when the account is only an inherited member, else 404. */
function directRow(ns: NamespaceState, group: GroupState, account: string): MemberState {
  const row = group.members[account];
  if (row) return row;
  if (isMember(ns, group, account)) throw conflict(`account ${account} is not a direct member of group '${group.id}' (membership is inherited)`);
  throw notFound(`account ${account} is not a member of group '${group.id}'`);
}

function requireAdminOrManage(ns: NamespaceState, group: GroupState, account: string): void {
  if (!isAdmin(group, account)) requireCapability(ns, group, account, 'MANAGE_MEMBERS');
}

/** Admin of the group or of any of its ancestors. */
function ancestorAdmin(ns: NamespaceState, group: GroupState, account: string): boolean {
  return ancestry(ns, group).some((g) => isAdmin(g, account));
}

function addMembers({ ns, op, emit }: ApplyContext): void {
  const group = groupOf(ns, op.groupId);
  const { members } = op.body as unknown as AddMembersBody;
  if (!Array.isArray(members) || members.length === 0) throw badRequest('members must not be empty');
  requireAdminOrManage(ns, group, op.account);
  for (const m of members) {
    refuseTeeRole(m.role);
    if (m.role === 'Admin' && !isAdmin(group, op.account)) {
      throw forbidden(`only an admin may add an Admin to group '${group.id}'; account ${op.account} is not an admin`);
    }
  }
  for (const m of members) {
    // re-adding a direct member leaves its row (role, capabilities, metadata) as it is
    if (group.members[m.account]) continue;
    group.members[m.account] = newMember(m.role, op.timestampMs);
    clearRemoval(group, m.account); // an admin's explicit re-add lifts the removal ban
    emit(group.id, 'MemberAdded', { memberAccount: m.account, role: m.role });
  }
}

function removeMembers({ ns, op, emit }: ApplyContext): void {
  const group = groupOf(ns, op.groupId);
  const accounts = [...new Set((op.body as { members: string[] }).members ?? [])];
  if (accounts.length === 0) throw badRequest('members must not be empty');
  requireAdminOrManage(ns, group, op.account);
  for (const account of accounts) {
    const row = directRow(ns, group, account);
    if (account === group.owner) throw forbidden(`account ${account} owns group '${group.id}' and cannot be removed`);
    if (row.role === 'Admin' && !isAdmin(group, op.account)) {
      throw forbidden(`only an admin may remove an Admin of group '${group.id}'; account ${op.account} is not an admin`);
    }
  }
  for (const account of accounts) delete group.members[account];
  if (adminCount(group) === 0) throw conflict(`removing these members would leave group '${group.id}' without an admin`);
  // banned from rejoining with any invitation issued before this removal (invitations/admission.ts)
  for (const account of accounts) recordRemoval(ns, group, account);
  for (const account of accounts) emit(group.id, 'MemberRemoved', { memberAccount: account });
}

function setRole({ ns, op }: ApplyContext): void {
  const group = groupOf(ns, op.groupId);
  const { account, role } = op.body as { account: string; role: Role };
  refuseTeeRole(role);
  requireAdmin(group, op.account);
  const row = directRow(ns, group, account);
  if (TEE_ROLES.includes(row.role)) throw forbidden(`account ${account} was admitted as ${row.role}; a TEE member's role is locked`);
  row.role = role;
  if (adminCount(group) === 0) throw conflict(`account ${account} is the last admin of group '${group.id}' and cannot be demoted`);
}

function setAutoFollow({ ns, op }: ApplyContext): void {
  const group = groupOf(ns, op.groupId);
  const { account, contexts, subgroups } = op.body as { account: string; contexts: boolean; subgroups: boolean };
  if (account !== op.account && !isAdmin(group, op.account)) {
    throw forbidden(`only the member itself or an admin of group '${group.id}' may set auto-follow for ${account}`);
  }
  directRow(ns, group, account).autoFollow = { contexts, subgroups };
}

function leave({ ns, op, emit }: ApplyContext): void {
  const group = groupOf(ns, op.groupId);
  if (group.parentId === null) throw badRequest(`group '${group.id}' is a namespace: leave it with POST /namespaces/{namespaceId}/leave`);
  if (!group.members[op.account]) throw conflict(`account ${op.account} is not a direct member of group '${group.id}'`);
  if (group.owner === op.account) throw forbidden(`account ${op.account} owns group '${group.id}' and cannot leave it; transfer ownership first`);
  delete group.members[op.account];
  if (adminCount(group) === 0) throw conflict(`account ${op.account} is the last admin of group '${group.id}' and cannot leave it`);
  emit(group.id, 'MemberRemoved', { memberAccount: op.account });
}

function joinOpen({ ns, op, emit }: ApplyContext): void {
  const group = groupOf(ns, op.groupId);
  if (group.members[op.account]) throw conflict(`account ${op.account} is already a direct member of group '${group.id}'`);
  if (group.parentId === null || group.subgroupVisibility !== 'open' || !isMember(ns, group, op.account)) {
    throw forbidden(`account ${op.account} has no membership path into group '${group.id}' (needs an open subgroup and CAN_JOIN_OPEN_SUBGROUPS on the parent chain)`);
  }
  group.members[op.account] = newMember('Member', op.timestampMs);
  emit(group.id, 'MemberJoined', { memberAccount: op.account });
}

function detachContext({ ns, op }: ApplyContext): void {
  const group = groupOf(ns, op.groupId);
  const { contextId } = op.body as { contextId: string };
  requireAdmin(group, op.account);
  if (!group.contexts[contextId]) throw notFound(`context '${contextId}' is not registered in group '${group.id}'`);
  delete group.contexts[contextId];
}

function reparent({ ns, op }: ApplyContext): void {
  const child = groupOf(ns, op.groupId);
  const { newParentId } = op.body as { newParentId: string };
  if (child.parentId === null) throw badRequest(`group '${child.id}' is a namespace root and has no parent to change`);
  if (newParentId === child.id) throw badRequest(`group '${child.id}' cannot be its own parent`);
  const target = ns.groups[newParentId];
  if (!target) throw notFound(`new parent group '${newParentId}' is not in namespace '${ns.id}'`);
  if (subtree(ns, child.id).some((g) => g.id === newParentId)) {
    throw conflict(`moving group '${child.id}' under '${newParentId}' would create a cycle`);
  }
  if (!ancestorAdmin(ns, groupOf(ns, child.parentId), op.account) || !ancestorAdmin(ns, target, op.account)) {
    throw forbidden(`account ${op.account} must be an admin of both the current and the new parent (or an ancestor of each)`);
  }
  child.parentId = newParentId;
}

function cascadeDelete({ ns, op, emit }: ApplyContext): void {
  const group = groupOf(ns, op.groupId);
  if (group.parentId === null) throw badRequest(`group '${group.id}' is a namespace root and cannot be deleted this way`);
  if (!ancestorAdmin(ns, group, op.account)) requireCapability(ns, groupOf(ns, group.parentId), op.account, 'CAN_DELETE_SUBGROUP');
  const ids = subtree(ns, group.id).map((g) => g.id);
  const claimed = (op.body as { groupIds?: string[] }).groupIds ?? [];
  // peers recompute the cascade and refuse an op whose list diverges (domain.md §4.4)
  if (claimed.length !== ids.length || claimed.some((id, i) => id !== ids[i])) {
    throw conflict(`the cascade of group '${group.id}' does not match this node's view of its subtree`);
  }
  // internal (never a stream frame): the contexts domain drops these contexts' local state
  const contextIds = ids.flatMap((id) => Object.keys(ns.groups[id]?.contexts ?? {}));
  for (const id of ids) delete ns.groups[id];
  emit(group.id, 'GroupDeleted', { groupIds: ids, contextIds });
}

export function registerMembersOps(registry: ApplierRegistry): void {
  registry.register(MEMBER_OPS.added, addMembers);
  registry.register(MEMBER_OPS.removed, removeMembers);
  registry.register(MEMBER_OPS.roleSet, setRole);
  registry.register(MEMBER_OPS.autoFollowSet, setAutoFollow);
  registry.register(MEMBER_OPS.left, leave);
  registry.register(MEMBER_OPS.joinedOpen, joinOpen);
  registry.register(MEMBER_OPS.contextDetached, detachContext);
  registry.register(MEMBER_OPS.reparented, reparent);
  registry.register(MEMBER_OPS.cascadeDeleted, cascadeDelete);
}
