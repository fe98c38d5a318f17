/**
 * Governance's own op kinds, registered in one place. The domains that record ops in its log
 * (accounts' devices, contexts' registrations, sync's group keys, upgrades, delegation) register
 * theirs with the same registry: the composition root passes them in (src/node/ops.ts).
 */
import { ApplierRegistry, type OpRegistration } from './appliers.ts';
import { registerGenesisOps } from './genesis.ts';
import { registerNamespaceManageOps } from './namespaces/manage-ops.ts';
import { registerAdmitOps } from './namespaces/manage-admit.ts';
import { registerSettingsOps } from './settings/ops.ts';
import { registerMembersOps } from './groups/members-ops.ts';
import { registerOwnerOps } from './owner/ops.ts';
import { registerInvitationOps } from './invitations/ops.ts';
import { registerSignerOps } from './signers.ts';

export function createAppliers(...extensions: OpRegistration[]): ApplierRegistry {
  const registry = new ApplierRegistry();
  registerGenesisOps(registry);
  registerNamespaceManageOps(registry);
  registerAdmitOps(registry);
  registerSettingsOps(registry);
  registerMembersOps(registry);
  registerOwnerOps(registry);
  registerInvitationOps(registry);
  registerSignerOps(registry);
  for (const register of extensions) register(registry);
  return registry;
}
