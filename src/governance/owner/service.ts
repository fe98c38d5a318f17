/**
 * Owner operations (admin-wire-b §5, §2.13, §4.21): authorizes each with the root guard (minting
 * the proof when this node holds the owner's root) and submits the op carrying the proof.
 * Knows nothing of HTTP.
 */
import type { NodeIdentity } from '../../identity/identity.ts';
import { groupOf } from '../authority.ts';
import type { Governance } from '../log.ts';
import { opDigestOf, rootGuard } from '../root-guard.ts';
import { adminChangedOpBorsh, groupDeleteOpBorsh, OWNER_OPS, transferOwnershipOpBorsh } from './ops.ts';
import { groupInScope } from '../namespaces/scope.ts';

export class OwnerService {
  constructor(private readonly d: { governance: Governance; identity: NodeIdentity }) {}

  async transferOwnership(groupId: string, newOwner: string, rootProof?: string): Promise<void> {
    const { ns, group } = groupInScope(this.d.governance, groupId, this.d.identity.accountId);
    const opDigest = opDigestOf(transferOwnershipOpBorsh(newOwner));
    const proof = rootGuard({ ns, group, kind: 'TransferOwnership', opDigest, account: group.owner, rootProof, identity: this.d.identity });
    await this.d.governance.submit(ns.id, group.id, OWNER_OPS.transfer, { newOwner, rootProof: proof });
  }

  async ownerDelete(groupId: string, rootProof?: string): Promise<void> {
    const { ns, group } = groupInScope(this.d.governance, groupId, this.d.identity.accountId);
    const opDigest = opDigestOf(groupDeleteOpBorsh());
    const proof = rootGuard({ ns, group, kind: 'GroupDelete', opDigest, account: group.owner, rootProof, identity: this.d.identity });
    await this.d.governance.submit(ns.id, group.id, OWNER_OPS.delete, { rootProof: proof });
  }

  async changeNamespaceAdmin(namespaceId: string, newAdmin: string, rootProof?: string): Promise<void> {
    const { ns } = groupInScope(this.d.governance, namespaceId, this.d.identity.accountId);
    const root = groupOf(ns, ns.id);
    const opDigest = opDigestOf(adminChangedOpBorsh(newAdmin));
    const proof = rootGuard({ ns, group: root, kind: 'AdminChanged', opDigest, account: root.owner, rootProof, identity: this.d.identity });
    await this.d.governance.submit(ns.id, ns.id, OWNER_OPS.adminChanged, { newAdmin, rootProof: proof });
  }
}
