/**
 * Namespace lifecycle ops (admin-wire-b §2.5, §2.9): deleting a namespace and the account leaving
 * it. Each checks its author's authority against the state. A deleted namespace keeps its log as a
 * tombstone (so a lagging node still learns of the deletion) and is no longer listed; a left one
 * drops out of the session's scope.
 */
import { conflict, forbidden } from '../../errors.ts';
import type { ApplierRegistry } from '../appliers.ts';
import { isAdmin } from '../authority.ts';

export function registerNamespaceManageOps(registry: ApplierRegistry): void {
  /** Only an admin of the root group may delete the namespace (a tombstone for replication). */
  registry.register('namespace.deleted', ({ ns, op, emit }) => {
    const root = ns.groups[ns.id];
    if (!root || !isAdmin(root, op.account)) {
      throw forbidden(`only an admin of namespace '${ns.id}' may delete it; account ${op.account} is not one`);
    }
    ns.deletedAt = op.timestampMs;
    // internal (never a stream frame): the contexts domain drops these contexts' local state
    emit(ns.id, 'NamespaceDeleted', { contextIds: Object.values(ns.groups).flatMap((g) => Object.keys(g.contexts)) });
  });

  /** Cascading self-leave: the account's rows go from every group of the namespace. */
  registry.register('namespace.left', ({ ns, op, emit }) => {
    const rows = Object.values(ns.groups).filter((g) => g.members[op.account]);
    if (rows.length === 0) throw forbidden(`account ${op.account} is not a direct member of namespace '${ns.id}'`);
    const root = ns.groups[ns.id];
    if (root?.owner === op.account) throw forbidden(`the owner of namespace '${ns.id}' cannot leave it (OwnerCannotSelfLeave)`);
    const owned = rows.find((g) => g.owner === op.account);
    if (owned) throw conflict(`account ${op.account} owns group '${owned.id}'; transfer its ownership before leaving (OwnerOwnsSubgroup)`);
    for (const g of rows) {
      const admins = Object.entries(g.members).filter(([, m]) => m.role === 'Admin').map(([a]) => a);
      if (admins.length === 1 && admins[0] === op.account) {
        throw conflict(`account ${op.account} is the last admin of group '${g.id}' (LastAdmin)`);
      }
    }
    for (const g of rows) {
      delete g.members[op.account];
      emit(g.id, 'MemberRemoved', { memberAccount: op.account });
    }
    if (ns.deviceBindings) delete ns.deviceBindings[op.account];
  });
}
