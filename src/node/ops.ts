/**
 * The op table: every governance op kind this node applies. Governance registers its own
 * (src/governance/ops.ts); each domain built on it adds its kinds here, in the composition root,
 * so governance knows none of them (docs/architecture.md).
 */
import type { ApplierRegistry, OpRegistration } from '../governance/appliers.ts';
import { createAppliers } from '../governance/ops.ts';
import { registerKeyOps } from '../sync/index.ts';
import { registerUpgradeOps } from '../upgrades/index.ts';
import { registerDelegationOps } from '../delegation/index.ts';

/** the domains' op registrations, in the order they were registered before they left governance */
export const DOMAIN_OPS: readonly OpRegistration[] = [registerKeyOps, registerUpgradeOps, registerDelegationOps];

export function nodeAppliers(): ApplierRegistry {
  return createAppliers(...DOMAIN_OPS);
}
