/**
 * What the governance routes are given (the face, index.ts, builds it; what the domains built on
 * governance add comes in through its `routeDeps`): one file of its own, so each family's routes.ts
 * takes the type from here and routes.ts, which gathers those families, is imported by none of them
 * (issue #35: no import closes a circle).
 */
import type { NodeIdentity } from '../identity/identity.ts';
import type { Clock } from '../clock.ts';
import type { GroupInfoFields } from './groups/schemas.ts';
import type { GroupService } from './groups/service.ts';
import type { MembersService } from './groups/members-service.ts';
import type { GroupSync } from './groups/sync-service.ts';
import type { InvitationService } from './invitations/service.ts';
import type { Governance } from './log.ts';
import type { NamespaceManageService } from './namespaces/manage-service.ts';
import type { NamespaceService } from './namespaces/service.ts';
import type { OwnerService } from './owner/service.ts';
import type { SettingsService } from './settings/service.ts';
import type { ContextUsage } from './usage.ts';

/**
 * What the namespace account routes (`/account/revoke`, `/account/link-device`) ask of this node's
 * account. `AccountService` (src/accounts/, built on governance) answers it; the composition root
 * hands it in, so governance imports nothing of accounts/.
 */
export interface NamespaceAccounts {
  /** withdraws the device in every namespace of the account */
  revoke(namespaceId: string, deviceId: string): Promise<{ accountId: string; deviceId: string; keyRotated: boolean; revokedIn: { namespaceId: string; keyRotated: boolean }[] }>;
  /** carries the link of a device (of any account) into the namespace */
  linkDevice(namespaceId: string, credential: string, scope: string): Promise<{ accountId: string; deviceId: string; alreadyBound: boolean }>;
}

export interface GovernanceRouteDeps {
  governance: Governance;
  identity: NodeIdentity;
  clock: Clock;
  namespaces: NamespaceService;
  groups: GroupService;
  /** namespace delete/leave/for-application/subgroups (namespaces/manage-*.ts) */
  namespaceManage: NamespaceManageService;
  /** this node's account and its devices (accounts/service.ts) */
  accounts: NamespaceAccounts;
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
