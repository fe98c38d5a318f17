/**
 * @module client/groups
 *
 * Group routes (admin-wire-b §4.2–§4.15, §4.18–§4.20): create, GroupInfo, membership and tree,
 * seal and ownership proofs. Bodies are decoded exactly as the wire sends them: `members`,
 * `member-devices` and `subgroups` are flat, `reparent` is flat `{reparented}`, both ownership
 * proofs are flat proof objects; create, info, contexts, delete, seal and join-via-inheritance are
 * `{data}` envelopes, and the "none" routes answer an empty 200 (these methods resolve to `void`).
 */

import type { CallOptions, HttpClient } from './http.ts';
import { PEER_WAIT_TIMEOUT_MS } from './http-types.ts';
import type { U64 } from '../codec/json.ts';
import type { GroupUpgradeStatus } from './upgrades.ts';
import type { OwnershipClaim, OwnershipProof, SealedEnvelope } from '../wire/ownership.ts';
import type { CreateGroupRequest } from '../wire/groups.ts';

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

/** The create body (src/wire/groups.ts). */
export type { CreateGroupRequest };

/** GroupInfo (admin spec "GroupInfo"; admin-wire-b §4.3). */
export interface GroupInfo {
  groupId: string;
  appKey: string;
  targetApplicationId: string;
  memberCount: number;
  contextCount: number;
  defaultCapabilities: number;
  subgroupVisibility: 'open' | 'restricted';
  /** the group's upgrade while it is in progress on this node */
  activeUpgrade?: GroupUpgradeStatus;
  metadata?: { name: string | null; data: Record<string, string>; updatedAt: number; updatedBy: string };
  groupStateHash?: string;
  namespaceId: string;
  /** the counter a root proof must name; a `bigint` past 2^53−1 */
  ownerOpCounter: U64;
}

export type { OwnershipClaim, OwnershipProof, SealedEnvelope };

export interface NamespaceOwnershipProof extends OwnershipProof {
  founding: { founderAccountId: string; salt: string };
  /** hex of the node's device credential (binds `signerPublicKey` to the founding account's root) */
  credential: string;
}

const seg = encodeURIComponent;

/** SyncGroupResponseData */
export interface SyncGroupResult {
  groupId: string;
  appKey: string;
  targetApplicationId: string;
  memberCount: number;
  contextCount: number;
}

export class GroupsApi {
  constructor(private readonly http: HttpClient) {}

  /** `POST /groups`: a namespace without `parentGroupId`, else a subgroup; the id is derived by the node. */
  create(body: CreateGroupRequest, options?: CallOptions): Promise<{ groupId: string }> {
    return this.http.data('/admin-api/groups', { ...options, method: 'POST', body });
  }

  /** `POST /groups/{g}/sync`: pulls the group's governance from peers, then answers its counts. */
  sync(groupId: string, options?: CallOptions): Promise<SyncGroupResult> {
    return this.http.data(`/admin-api/groups/${seg(groupId)}/sync`, { timeoutMs: PEER_WAIT_TIMEOUT_MS, ...options, method: 'POST', body: {} });
  }

  /** `GET /groups/{g}`: GroupInfo. */
  info(groupId: string, options?: CallOptions): Promise<GroupInfo> {
    return this.http.data(`/admin-api/groups/${seg(groupId)}`, options);
  }

  /** `POST /groups/{g}/accounts/{account}/seal`: `plaintext` as hex, sealed to the account's current root. */
  seal(groupId: string, account: string, plaintext: string, options?: CallOptions): Promise<SealedEnvelope> {
    return this.http.data(`/admin-api/groups/${seg(groupId)}/accounts/${seg(account)}/seal`, { ...options, method: 'POST', body: { plaintext } });
  }

  /** `POST /groups/{g}/issue-ownership-proof` (flat): a claim about a context in the group's tree. */
  issueOwnershipProof(groupId: string, claim: OwnershipClaim & { contextId: string }, options?: CallOptions): Promise<OwnershipProof> {
    return this.http.json(`/admin-api/groups/${seg(groupId)}/issue-ownership-proof`, { ...options, method: 'POST', body: claim });
  }

  /** `POST /groups/{ns}/issue-namespace-ownership-proof` (flat): a claim about the whole namespace. */
  issueNamespaceOwnershipProof(namespaceId: string, claim: OwnershipClaim, options?: CallOptions): Promise<NamespaceOwnershipProof> {
    return this.http.json(`/admin-api/groups/${seg(namespaceId)}/issue-namespace-ownership-proof`, { ...options, method: 'POST', body: claim });
  }

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

  /**
   * `POST /groups/{g}/signing-key`: hands the node the Ed25519 secret (64 hex) of a signing key of
   * its own account in the group's namespace; answers the key's public half.
   */
  registerSigningKey(groupId: string, body: { signingKey: string }, options?: CallOptions): Promise<{ publicKey: string }> {
    return this.http.data(`/admin-api/groups/${seg(groupId)}/signing-key`, { ...options, method: 'POST', body });
  }
}
