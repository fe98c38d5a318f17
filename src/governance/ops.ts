/**
 * Governance's op kinds (and those of the accounts and contexts governance records), registered in
 * one place. Domains built on governance (sync's group keys, upgrades, delegation) register their
 * own with the same registry: the composition root passes them in (src/node/ops.ts).
 */
import { ApplierRegistry, type OpRegistration } from './appliers.ts';
import { registerGenesisOps } from './genesis.ts';
import { registerNamespaceManageOps } from './namespaces/manage-ops.ts';
import { registerAdmitOps } from './namespaces/manage-admit.ts';
import { registerDeviceOps } from '../accounts/device-ops.ts';
import { registerSettingsOps } from './settings/ops.ts';
import { registerMembersOps } from './groups/members-ops.ts';
import { registerOwnerOps } from './owner/ops.ts';
import { registerInvitationOps } from './invitations/ops.ts';
import { registerContextOps } from '../contexts/ops.ts';
import { registerSignerOps } from './signers.ts';

export function createAppliers(...extensions: OpRegistration[]): ApplierRegistry {
  const registry = new ApplierRegistry();
  registerGenesisOps(registry);
  registerNamespaceManageOps(registry);
  registerAdmitOps(registry);
  registerDeviceOps(registry);
  registerSettingsOps(registry);
  registerMembersOps(registry);
  registerOwnerOps(registry);
  registerInvitationOps(registry);
  registerContextOps(registry);
  registerSignerOps(registry);
  for (const register of extensions) register(registry);
  return registry;
}
