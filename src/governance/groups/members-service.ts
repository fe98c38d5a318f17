/**
 * Group membership and tree (admin spec "Groups"; admin-wire-b §4.4–§4.15, §4.18): reading
 * members, member devices, contexts and subgroups, and authoring the membership/tree ops of
 * `members-ops.ts` as this node's account. Knows nothing of HTTP.
 */
import type { NodeIdentity } from '../../identity/identity.ts';
import { badRequest } from '../../errors.ts';
import { childrenOf, isAdmin, requireMember, subtree } from '../authority.ts';
import type { Governance } from '../log.ts';
import type { GroupState, MemberState, NamespaceState, Role } from '../types.ts';
import { effectiveMembers } from '../views.ts';
import { MEMBER_OPS, refuseTeeRole } from './members-ops.ts';
import { groupInScope } from '../namespaces/scope.ts';

export interface MemberEntry {
  identity: string;
  role: Role;
  name?: string;
}

export interface MemberDevicesEntry {
  account: string;
  devices: { deviceId: string; signingKey: string }[];
}

export const MEMBER_DEVICES_DEFAULT_LIMIT = 100;
export const MEMBER_DEVICES_MAX_LIMIT = 1000;

/** The row an account's membership of `group` comes from: its own, else the open-inheritance anchor's. */
function membershipRow(ns: NamespaceState, group: GroupState, account: string): MemberState | undefined {
  for (let g: GroupState | undefined = group; g; g = g.parentId ? ns.groups[g.parentId] : undefined) {
    const row = g.members[account];
    if (row) return row;
    if (g.subgroupVisibility !== 'open') return undefined;
  }
  return undefined;
}

export class MembersService {
  constructor(private readonly d: { governance: Governance; identity: NodeIdentity }) {}

  private get me(): string {
    return this.d.identity.accountId;
  }

  /** A group this node's account may read (effective member), else 404/403. */
  private readable(groupId: string): { ns: NamespaceState; group: GroupState } {
    const found = groupInScope(this.d.governance, groupId, this.d.identity.accountId);
    requireMember(found.ns, found.group, this.me);
    return found;
  }

  private async submit(groupId: string, kind: string, body: Record<string, unknown>): Promise<void> {
    const { ns } = groupInScope(this.d.governance, groupId, this.d.identity.accountId);
    await this.d.governance.submit(ns.id, groupId, kind, body);
  }

  /** Direct and inherited members; an inherited one reports its anchor row's role (docs/governance.md). */
  members(groupId: string): MemberEntry[] {
    const { ns, group } = this.readable(groupId);
    return effectiveMembers(ns, group).flatMap((account) => {
      const row = membershipRow(ns, group, account);
      if (!row) return [];
      const name = row.metadata?.name ?? row.name;
      return [{ identity: account, role: row.role, ...(name ? { name } : {}) }];
    });
  }

  async addMembers(groupId: string, members: { identity: string; role: string }[]): Promise<void> {
    if (members.length === 0) throw badRequest('members must not be empty');
    for (const m of members) refuseTeeRole(m.role);
    await this.submit(groupId, MEMBER_OPS.added, { members: members.map((m) => ({ account: m.identity, role: m.role })) });
  }

  async removeMembers(groupId: string, accounts: string[]): Promise<void> {
    if (accounts.length === 0) throw badRequest('members must not be empty');
    await this.submit(groupId, MEMBER_OPS.removed, { members: accounts });
  }

  async setRole(groupId: string, account: string, role: string): Promise<void> {
    refuseTeeRole(role);
    await this.submit(groupId, MEMBER_OPS.roleSet, { account, role });
  }

  async setAutoFollow(groupId: string, account: string, contexts: boolean, subgroups: boolean): Promise<void> {
    await this.submit(groupId, MEMBER_OPS.autoFollowSet, { account, contexts, subgroups });
  }

  /**
   * Admins see every effective member; a plain member only its own entry. Devices come from the
   * namespace's device bindings: this node knows its own device; other accounts list none until
   * bindings are replicated.
   */
  memberDevices(groupId: string, offset = 0, limit = MEMBER_DEVICES_DEFAULT_LIMIT): MemberDevicesEntry[] {
    const { ns, group } = this.readable(groupId);
    const accounts = isAdmin(group, this.me) ? effectiveMembers(ns, group) : [this.me];
    const clamped = Math.min(Math.max(limit, 1), MEMBER_DEVICES_MAX_LIMIT);
    return accounts.slice(offset, offset + clamped).map((account) => ({
      account,
      devices: account === this.me ? [{ deviceId: this.d.identity.deviceId, signingKey: this.d.identity.publicKey }] : [],
    }));
  }

  contexts(groupId: string): { contextId: string; name?: string }[] {
    const { group } = this.readable(groupId);
    return Object.entries(group.contexts).map(([contextId, c]) => ({ contextId, ...(c.name !== undefined ? { name: c.name } : {}) }));
  }

  async removeContext(groupId: string, contextId: string): Promise<void> {
    await this.submit(groupId, MEMBER_OPS.contextDetached, { contextId });
  }

  subgroups(groupId: string): { groupId: string; name?: string }[] {
    const { ns } = this.readable(groupId);
    return childrenOf(ns, groupId).map((g) => ({ groupId: g.id, ...(g.name !== undefined ? { name: g.name } : {}) }));
  }

  async reparent(childGroupId: string, newParentId: string): Promise<void> {
    const { ns } = groupInScope(this.d.governance, childGroupId, this.d.identity.accountId);
    const target = this.d.governance.locate(newParentId);
    if (target && target.ns.id !== ns.id) {
      throw badRequest(`group '${newParentId}' is in namespace '${target.ns.id}', not in '${ns.id}': reparenting cannot cross namespaces`);
    }
    await this.d.governance.submit(ns.id, childGroupId, MEMBER_OPS.reparented, { newParentId });
  }

  async leave(groupId: string): Promise<void> {
    await this.submit(groupId, MEMBER_OPS.left, {});
  }

  /** `wasInherited: false` when this node's account already holds a direct row (no op is authored). */
  async joinViaInheritance(groupId: string): Promise<{ groupId: string; memberPublicKey: string; wasInherited: boolean }> {
    const { group } = groupInScope(this.d.governance, groupId, this.d.identity.accountId);
    const wasInherited = !group.members[this.me];
    if (wasInherited) await this.submit(groupId, MEMBER_OPS.joinedOpen, {});
    return { groupId, memberPublicKey: this.d.identity.publicKey, wasInherited };
  }

  /** Deletes a subgroup and its subtree; the op carries the cascade so peers can check it. */
  async deleteGroup(groupId: string): Promise<void> {
    const { ns } = groupInScope(this.d.governance, groupId, this.d.identity.accountId);
    const groupIds = subtree(ns, groupId).map((g) => g.id);
    await this.submit(groupId, MEMBER_OPS.cascadeDeleted, { groupIds });
  }
}
