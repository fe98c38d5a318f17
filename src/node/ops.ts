/**
 * The op table: every governance op kind this node applies. Governance registers its own
 * (src/governance/ops.ts); each domain that records ops in its log adds its kinds here, in the
 * composition root, so governance knows none of them (docs/architecture.md).
 */
import { type ApplierRegistry, createAppliers, type OpRegistration } from '../governance/index.ts';
import { registerDeviceOps } from '../accounts/index.ts';
import { registerContextOps } from '../contexts/index.ts';
import { registerKeyOps } from '../sync/index.ts';
import { registerUpgradeOps } from '../upgrades/index.ts';
import { registerDelegationOps } from '../delegation/index.ts';

/** the domains' op registrations (a registry keys appliers by kind: the order does not matter) */
export const DOMAIN_OPS: readonly OpRegistration[] = [registerDeviceOps, registerContextOps, registerKeyOps, registerUpgradeOps, registerDelegationOps];

export function nodeAppliers(): ApplierRegistry {
  return createAppliers(...DOMAIN_OPS);
}
