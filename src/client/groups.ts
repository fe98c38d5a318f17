/**
 * @module client/groups
 *
 * Group membership and tree routes (admin-wire-b §4.4–§4.15, §4.18). Bodies are decoded exactly as
 * the wire sends them: `members`, `member-devices` and `subgroups` are flat, `reparent` is flat
 * `{reparented}`, contexts, delete and join-via-inheritance are `{data}` envelopes, and the "none"
 * routes answer an empty 200 (these methods resolve to `void`).
 */

import type { CallOptions, HttpClient } from './http.ts';

export type GroupRole = 'Admin' | 'Member' | 'ReadOnly' | 'ReadOnlyTee' | 'RelayTee';

export interface GroupMember {
  /** the member's account (64 hex) */
  identity: string;
  role: GroupRole;
  name?: string;
}

export interface GroupMemberDevices {
  account: string;
  devices: { deviceId: string; signingKey: string }[];
}

export interface GroupEntry {
  groupId: string;
  name?: string;
}

export interface GroupContextEntry {
  contextId: string;
  name?: string;
}

export interface JoinViaInheritanceResult {
  groupId: string;
  memberPublicKey: string;
  /** false: already a direct member, nothing changed */
  wasInherited: boolean;
}

const seg = encodeURIComponent;

export class GroupsApi {
  constructor(private readonly http: HttpClient) {}

  /** `DELETE /groups/{g}`: cascading delete of a subgroup and its subtree. */
  deleteGroup(groupId: string, options?: CallOptions): Promise<{ isDeleted: boolean }> {
    return this.http.data(`/admin-api/groups/${seg(groupId)}`, { ...options, method: 'DELETE' });
  }

  async members(groupId: string, options?: CallOptions): Promise<GroupMember[]> {
    return (await this.http.json<{ members: GroupMember[] }>(`/admin-api/groups/${seg(groupId)}/members`, options)).members;
  }

  async addMembers(groupId: string, members: { identity: string; role: GroupRole }[], options?: CallOptions): Promise<void> {
    await this.http.send(`/admin-api/groups/${seg(groupId)}/members`, { ...options, method: 'POST', body: { members } });
  }

  async removeMembers(groupId: string, accounts: string[], options?: CallOptions): Promise<void> {
    await this.http.send(`/admin-api/groups/${seg(groupId)}/members/remove`, { ...options, method: 'POST', body: { members: accounts } });
  }

  async setMemberRole(groupId: string, account: string, role: GroupRole, options?: CallOptions): Promise<void> {
    await this.http.send(`/admin-api/groups/${seg(groupId)}/members/${seg(account)}/role`, { ...options, method: 'PUT', body: { role } });
  }

  async setAutoFollow(groupId: string, account: string, follow: { autoFollowContexts: boolean; autoFollowSubgroups: boolean }, options?: CallOptions): Promise<void> {
    await this.http.send(`/admin-api/groups/${seg(groupId)}/members/${seg(account)}/auto-follow`, { ...options, method: 'PUT', body: follow });
  }

  async memberDevices(groupId: string, page: { offset?: number; limit?: number } = {}, options?: CallOptions): Promise<GroupMemberDevices[]> {
    const path = `/admin-api/groups/${seg(groupId)}/member-devices`;
    return (await this.http.json<{ members: GroupMemberDevices[] }>(path, { ...options, query: page })).members;
  }

  contexts(groupId: string, options?: CallOptions): Promise<GroupContextEntry[]> {
    return this.http.data(`/admin-api/groups/${seg(groupId)}/contexts`, options);
  }

  async removeContext(groupId: string, contextId: string, options?: CallOptions): Promise<void> {
    await this.http.send(`/admin-api/groups/${seg(groupId)}/contexts/${seg(contextId)}/remove`, { ...options, method: 'POST', body: {} });
  }

  async subgroups(groupId: string, options?: CallOptions): Promise<GroupEntry[]> {
    const body = await this.http.json<{ subgroups?: GroupEntry[]; data?: GroupEntry[] }>(`/admin-api/groups/${seg(groupId)}/subgroups`, options);
    return body.subgroups ?? body.data ?? [];
  }

  async reparent(childGroupId: string, newParentId: string, options?: CallOptions): Promise<boolean> {
    const path = `/admin-api/groups/${seg(childGroupId)}/reparent`;
    const body = await this.http.json<{ reparented?: boolean; data?: { reparented: boolean } }>(path, { ...options, method: 'POST', body: { newParentId } });
    return body.reparented ?? body.data?.reparented ?? false;
  }

  async leave(groupId: string, options?: CallOptions): Promise<void> {
    await this.http.send(`/admin-api/groups/${seg(groupId)}/leave`, { ...options, method: 'POST' });
  }

  joinViaInheritance(groupId: string, options?: CallOptions): Promise<JoinViaInheritanceResult> {
    return this.http.data(`/admin-api/groups/${seg(groupId)}/join-via-inheritance`, { ...options, method: 'POST' });
  }
}
