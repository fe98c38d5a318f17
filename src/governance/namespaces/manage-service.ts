/**
 * Managing namespaces (admin spec "Namespaces"; admin-wire-b §2.5, §2.6, §2.9, §2.11, §2.12):
 * deleting one, listing the ones for an application, leaving one, and creating and listing its
 * subgroups. Every namespace is looked up through the account session's scope (scope.ts): one the
 * node's account does not take part in is 404.
 */
import { badRequest, HearthError } from '../../errors.ts';
import type { NodeIdentity } from '../../identity/identity.ts';
import type { Clock } from '../../clock.ts';
import { hexOf, parseInvitation } from '../invitations/codec.ts';
import { checkInvitation, decodeSignedJoin, verifySignedJoin } from './manage-admit.ts';
import { subtree } from '../authority.ts';
import type { GroupService } from '../groups/service.ts';
import type { Governance } from '../log.ts';
import type { NamespaceState } from '../types.ts';
import type { NamespaceService } from './service.ts';

export class NamespaceManageService {
  constructor(private readonly d: { governance: Governance; namespaces: NamespaceService; groups: GroupService; identity: NodeIdentity; clock: Clock }) {}

  /** An admin of the root group writes the tombstone op; every node then stops listing the namespace. */
  async delete(namespaceId: string): Promise<void> {
    this.d.namespaces.get(namespaceId);
    await this.d.governance.submit(namespaceId, namespaceId, 'namespace.deleted', {});
  }

  forApplication(applicationId: string): NamespaceState[] {
    return this.d.namespaces.list().filter((ns) => (ns.groups[ns.id]?.targetApplicationId ?? ns.targetApplicationId) === applicationId);
  }

  async leave(namespaceId: string): Promise<void> {
    this.d.namespaces.get(namespaceId);
    await this.d.governance.submit(namespaceId, namespaceId, 'namespace.left', {});
  }

  /** A subgroup directly below the namespace root, with the root's application. */
  async createGroup(namespaceId: string, input: { name?: string; visibility: 'open' | 'restricted' }): Promise<string> {
    const located = this.d.governance.locate(namespaceId);
    if (located && located.group.parentId !== null) {
      this.d.namespaces.get(located.ns.id); // a group of a namespace outside the session's scope stays 404
      throw badRequest('namespace_id must reference a root group (namespace)');
    }
    const ns = this.d.namespaces.get(namespaceId);
    const root = ns.groups[ns.id];
    if (!root) throw badRequest('namespace_id must reference a root group (namespace)');
    return this.d.groups.create({
      applicationId: root.targetApplicationId,
      appKey: root.appKey,
      name: input.name,
      parentGroupId: ns.id,
      visibility: input.visibility,
    });
  }

  /**
   * Admits a keyholder's self-signed join (admin-wire-b §2.10), checks in the wire's order:
   * invitation group = path, signedOp decodes, names the path, is a join, verifies (400) → this
   * node's account is an admitter (403) → the invitation holds (403) → applies (400 when refused).
   */
  async admit(namespaceId: string, rawInvitation: unknown, signedOp: string): Promise<void> {
    const ns = this.d.namespaces.get(namespaceId);
    const inv = parseInvitation(rawInvitation);
    if (hexOf(inv.invitation.group_id) !== namespaceId) throw badRequest('invitation group_id does not match namespace_id in path');
    verifySignedJoin(decodeSignedJoin(signedOp), namespaceId);
    checkInvitation(ns, inv, this.d.identity.accountId, Math.floor(this.d.clock.now() / 1000));
    try {
      await this.d.governance.submit(namespaceId, namespaceId, 'namespace.admitted', { invitation: inv as unknown as Record<string, unknown>, signedOp });
    } catch (e) {
      if (e instanceof HearthError && e.kind !== 'not_found') throw badRequest(`signed_op was refused on apply: ${e.message}`);
      throw e;
    }
  }

  /** Every group of the namespace below its root, parents before children. */
  groups(namespaceId: string): { groupId: string; name?: string }[] {
    const ns = this.d.namespaces.get(namespaceId);
    return subtree(ns, ns.id)
      .filter((g) => g.id !== ns.id)
      .map((g) => ({ groupId: g.id, ...(g.name !== undefined ? { name: g.name } : {}) }));
  }
}
