/**
 * Root-guarded owner ops (admin-wire-b §5, §2.13, §4.21): transfer ownership, owner delete and
 * namespace admin change. Each op carries the `rootProof` it was authorized with, and its applier
 * re-verifies it against the state (so an op replicated from another node is checked alike) and
 * advances the group's `ownerOpCounter` by one. `*OpBorsh` are the op bytes the proof's digest
 * covers (§5.2, pinned to core's root-guarded vectors).
 */
import { badRequest, conflict, forbidden } from '../../errors.ts';
import type { ApplierRegistry } from '../appliers.ts';
import { groupOf, subtree } from '../authority.ts';
import { BorshWriter } from '../../codec/borsh.ts';
import { advanceOwnerOpCounter, opDigestOf, verifyRootProof } from '../root-guard.ts';
import { recordRootProof } from '../proofs/roots.ts';

/** GroupOp #21 TransferOwnership ‖ new owner */
export const transferOwnershipOpBorsh = (newOwner: string) => new BorshWriter().u8(0x15).hex32(newOwner).toBuffer();
/** GroupOp #14 GroupDelete */
export const groupDeleteOpBorsh = () => new BorshWriter().u8(0x0e).toBuffer();
/** RootOp #3 AdminChanged ‖ new admin */
export const adminChangedOpBorsh = (newAdmin: string) => new BorshWriter().u8(0x03).hex32(newAdmin).toBuffer();

export const OWNER_OPS = {
  transfer: 'owner.ownershipTransferred',
  delete: 'owner.groupDeleted',
  adminChanged: 'owner.namespaceAdminChanged',
} as const;

export interface TransferBody {
  newOwner: string;
  rootProof: string;
}
export interface DeleteBody {
  rootProof: string;
}
export interface AdminChangedBody {
  newAdmin: string;
  rootProof: string;
}

export function registerOwnerOps(registry: ApplierRegistry): void {
  registry.register(OWNER_OPS.transfer, ({ ns, op }) => {
    const b = op.body as unknown as TransferBody;
    const group = groupOf(ns, op.groupId);
    if (op.account !== group.owner) throw forbidden(`only the owner of group '${group.id}' may transfer its ownership`);
    const row = group.members[b.newOwner];
    if (!row) throw conflict(`transfer target ${b.newOwner} is not a member of group '${group.id}'`);
    if (row.role !== 'Admin') throw conflict(`transfer target ${b.newOwner} is not an admin of group '${group.id}'`);
    const opDigest = opDigestOf(transferOwnershipOpBorsh(b.newOwner));
    recordRootProof(ns, verifyRootProof({ ns, group, kind: 'TransferOwnership', opDigest, account: group.owner, rootProof: b.rootProof }));
    group.owner = b.newOwner;
    advanceOwnerOpCounter(group);
  });

  registry.register(OWNER_OPS.delete, ({ ns, op, emit }) => {
    const b = op.body as unknown as DeleteBody;
    const group = groupOf(ns, op.groupId);
    if (op.account !== group.owner) throw forbidden(`only the owner of group '${group.id}' may delete it`);
    if (group.parentId === null) throw badRequest('cannot owner-delete a namespace root; delete the namespace instead');
    const doomed = subtree(ns, group.id);
    const withContexts = doomed.find((g) => Object.keys(g.contexts).length > 0);
    if (withContexts) throw conflict(`group '${withContexts.id}' has registered contexts; remove them before deleting`);
    recordRootProof(ns, verifyRootProof({ ns, group, kind: 'GroupDelete', opDigest: opDigestOf(groupDeleteOpBorsh()), account: group.owner, rootProof: b.rootProof }));
    for (const g of doomed) {
      delete ns.groups[g.id];
      emit(g.id, 'GroupDeleted', { groupId: g.id });
    }
  });

  registry.register(OWNER_OPS.adminChanged, ({ ns, op }) => {
    const b = op.body as unknown as AdminChangedBody;
    const root = groupOf(ns, ns.id);
    if (op.account !== root.owner) throw forbidden(`only the owner of namespace '${ns.id}' may change its admin`);
    const row = root.members[b.newAdmin];
    if (!row) throw conflict(`new admin ${b.newAdmin} is not a member of namespace '${ns.id}'`);
    const opDigest = opDigestOf(adminChangedOpBorsh(b.newAdmin));
    recordRootProof(ns, verifyRootProof({ ns, group: root, kind: 'AdminChanged', opDigest, account: root.owner, rootProof: b.rootProof }));
    root.admin = b.newAdmin;
    // the namespace admin administers the namespace: it holds the Admin role in the root
    row.role = 'Admin';
    delete row.capabilities;
    advanceOwnerOpCounter(root);
  });
}
