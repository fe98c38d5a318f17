/**
 * Mounts the governance half of the admin interface: namespaces, groups and their settings. Each
 * family registers its own routes; this file only gathers them for the route table.
 */
import type { FastifyInstance } from 'fastify';
import { registerGroupRoutes } from './groups/routes.ts';
import { registerMembersRoutes } from './groups/members-routes.ts';
import { registerOwnerRoutes } from './owner/routes.ts';
import { registerInvitationRoutes } from './invitations/routes.ts';
import { registerNamespaceRoutes } from './namespaces/routes.ts';
import { registerNamespaceManageRoutes } from './namespaces/manage-routes.ts';
import { registerSettingsRoutes } from './settings/routes.ts';
import { registerProofRoutes } from './proofs/routes.ts';
import { registerGroupSyncRoutes } from './groups/sync-routes.ts';
import { registerUsageRoute } from './usage.ts';
import type { GovernanceRouteDeps } from './route-deps.ts';

export function registerGovernanceRoutes(app: FastifyInstance, deps: GovernanceRouteDeps): void {
  registerNamespaceRoutes(app, deps);
  registerNamespaceManageRoutes(app, { manage: deps.namespaceManage, namespaces: deps.namespaces, accounts: deps.accounts });
  registerGroupRoutes(app, deps);
  registerSettingsRoutes(app, deps);
  registerMembersRoutes(app, deps);
  registerOwnerRoutes(app, deps);
  registerInvitationRoutes(app, deps);
  registerProofRoutes(app, deps);
  registerGroupSyncRoutes(app, deps);
  registerUsageRoute(app, { governance: deps.governance, account: () => deps.identity.accountId, contextUsage: deps.contextUsage ?? (async () => undefined) });
}
