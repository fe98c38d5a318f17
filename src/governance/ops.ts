/** Every governance op kind the node knows, registered in one place for the composition root. */
import { ApplierRegistry } from './appliers.ts';
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
import { registerKeyOps } from '../sync/keys.ts';
import { registerUpgradeOps } from '../upgrades/ops.ts';
import { registerDelegationOps } from '../delegation/ops.ts';

export function createAppliers(): ApplierRegistry {
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
  registerKeyOps(registry);
  registerUpgradeOps(registry);
  registerDelegationOps(registry);
  return registry;
}
