/**
 * Groups (admin spec "Groups"; admin-wire-b §4): creating subgroups (ids derived) and reading
 * GroupInfo. A group without a parent is a new namespace.
 */
import { randomBytes } from 'node:crypto';
import type { NodeIdentity } from '../../identity/identity.ts';
import { subgroupIdOf } from '../../crypto/ids.ts';
import type { SubgroupBody } from '../genesis.ts';
import type { Governance } from '../log.ts';
import type { NamespaceService } from '../namespaces/service.ts';
import type { GroupState, NamespaceState } from '../types.ts';
import { groupInScope } from '../namespaces/scope.ts';
import type { CreateGroupRequest } from '../../wire/groups.ts';


export class GroupService {
  constructor(private readonly d: { governance: Governance; identity: NodeIdentity; namespaces: NamespaceService }) {}

  async create(input: CreateGroupRequest): Promise<string> {
    if (!input.parentGroupId) {
      return (await this.d.namespaces.found({ applicationId: input.applicationId, appKey: input.appKey, name: input.name })).id;
    }
    const { ns } = groupInScope(this.d.governance, input.parentGroupId, this.d.identity.accountId);
    const visibility = input.visibility ?? 'open';
    const salt = randomBytes(32).toString('hex');
    const groupId = subgroupIdOf(this.d.identity.accountId, input.parentGroupId, visibility === 'restricted', salt);
    const body: SubgroupBody = {
      groupId,
      parentId: input.parentGroupId,
      salt,
      visibility,
      name: input.name,
      applicationId: input.applicationId,
      appKey: input.appKey,
    };
    await this.d.governance.submit(ns.id, input.parentGroupId, 'group.created', { ...body });
    return groupId;
  }

  get(groupId: string): { ns: NamespaceState; group: GroupState } {
    return groupInScope(this.d.governance, groupId, this.d.identity.accountId);
  }
}
