/**
 * Mounts the governance half of the admin interface: namespaces, groups and their settings. Each
 * family registers its own routes; this file only gathers them for the route table.
 */
import type { FastifyInstance } from 'fastify';
import type { NodeIdentity } from '../accounts/identity.ts';
import type { Clock } from '../clock.ts';
import type { GroupService } from './groups/service.ts';
import type { GroupInfoFields } from './groups/schemas.ts';
import { registerGroupRoutes } from './groups/routes.ts';
import type { MembersService } from './groups/members-service.ts';
import { registerMembersRoutes } from './groups/members-routes.ts';
import type { OwnerService } from './owner/service.ts';
import { registerOwnerRoutes } from './owner/routes.ts';
import type { InvitationService } from './invitations/service.ts';
import { registerInvitationRoutes } from './invitations/routes.ts';
import type { Governance } from './log.ts';
import type { NamespaceService } from './namespaces/service.ts';
import { registerNamespaceRoutes } from './namespaces/routes.ts';
import type { NamespaceManageService } from './namespaces/manage-service.ts';
import { registerNamespaceManageRoutes } from './namespaces/manage-routes.ts';
import type { AccountService } from '../accounts/service.ts';
import type { SettingsService } from './settings/service.ts';
import { registerSettingsRoutes } from './settings/routes.ts';
import { registerProofRoutes } from './proofs/routes.ts';
import { registerGroupSyncRoutes, type GroupSync } from './groups/sync-routes.ts';
import { registerUsageRoute, type ContextUsage } from './usage.ts';

export interface GovernanceRouteDeps {
  governance: Governance;
  identity: NodeIdentity;
  clock: Clock;
  namespaces: NamespaceService;
  groups: GroupService;
  /** namespace delete/leave/for-application/subgroups (namespaces/manage-*.ts) */
  namespaceManage: NamespaceManageService;
  /** this node's account and its devices (accounts/service.ts) */
  accounts: AccountService;
  settings: SettingsService;
  members: MembersService;
  owner: OwnerService;
  invitations: InvitationService;
  /** governance replication; absent on a node without a network */
  sync?: GroupSync;
  /** what a context takes on this node (the usage route); undefined when it is not held here */
  contextUsage?: (contextId: string) => Promise<ContextUsage | undefined>;
  /** GroupInfo fields domains built on governance add (src/upgrades: `activeUpgrade`), wired by the composition root */
  groupInfoFields?: GroupInfoFields;
}

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
