/**
 * The governance domain's face: the signed op log (re-verified when the node opens), the services
 * over it the admin API uses (namespaces, groups, members, settings, owner, invitations, group
 * signing keys) and, on a node with a network, the replication of the log to member nodes
 * (docs/governance.md). The op kinds of the domains built on governance come in as `appliers`.
 *
 * @example
 * const gov = await createGovernance({ store, identity, clock, bus, appliers: nodeAppliers(), network, router, logger, onDialed, routeDeps });
 * gov.groups.create(…);
 */
import type { Logger } from 'pino';
import type { GaugeSource } from '../http/metrics.ts';
import type { RouteGroups } from '../http/route-groups.ts';
import type { Network } from '../network/index.ts';
import type { StreamRouter } from '../network/index.ts';
import { MembersService } from './groups/members-service.ts';
import { GroupService } from './groups/service.ts';
import { InvitationService } from './invitations/service.ts';
import { Governance, type GovernanceDeps } from './log.ts';
import { NamespaceManageService } from './namespaces/manage-service.ts';
import { NamespaceService } from './namespaces/service.ts';
import { OwnerService } from './owner/service.ts';
import { replicationSeries } from './replication/metrics.ts';
import { GovernanceReplicator } from './replication/replicator.ts';
import type { GovernanceRouteDeps } from './route-deps.ts';
import { registerGovernanceRoutes } from './routes.ts';
import { SettingsService } from './settings/service.ts';
import { registerSigningKeyRoutes } from './signing-key/routes.ts';
import { SigningKeyService } from './signing-key/service.ts';

/** The log's deps (`appliers`: every op kind this node applies, governance's own and the domains' built on it), and replication's. */
export interface GovernanceDomainDeps extends GovernanceDeps {
  /** absent on a standalone node: nothing replicates */
  network?: Network;
  router?: StreamRouter;
  logger: Logger;
  /** an invitation's admitter address that answered a dial (kept connected, remembered) */
  onDialed?: (address: string) => Promise<void>;
  /**
   * what the governance routes take from the domains built on governance (this node's account, a
   * context's usage, the GroupInfo fields they add), read when the routes are mounted: those
   * domains are built after this one
   */
  routeDeps: () => Pick<GovernanceRouteDeps, 'accounts' | 'contextUsage' | 'groupInfoFields'>;
}

export interface GovernanceDomain {
  readonly name: 'governance';
  governance: Governance;
  namespaces: NamespaceService;
  groups: GroupService;
  namespaceManage: NamespaceManageService;
  settings: SettingsService;
  members: MembersService;
  owner: OwnerService;
  invitations: InvitationService;
  /** group signing keys this node holds (`POST /groups/{id}/signing-key`) */
  signingKeys: SigningKeyService;
  /** the log's replication to member nodes (absent when standalone) */
  replicator?: GovernanceReplicator;
  /** the namespace, group, member, settings, owner, invitation and proof routes; the group signing keys' apart */
  routes: RouteGroups;
  metrics(): Iterable<GaugeSource>;
  start(): void;
  stop(): Promise<void>;
}

export async function createGovernance(d: GovernanceDomainDeps): Promise<GovernanceDomain> {
  const { store, identity, clock } = d;
  const governance = new Governance({ store, identity, clock, bus: d.bus, appliers: d.appliers });
  const verified = await governance.load();
  if (verified.droppedOps.length + verified.droppedNamespaces.length + verified.rederived.length > 0) {
    // one line: what the stored governance log held that honest code does not accept (issue #23 section 6)
    d.logger.warn(
      {
        droppedOps: verified.droppedOps.length,
        droppedNamespaces: verified.droppedNamespaces,
        rederived: verified.rederived,
        reasons: [...new Set(verified.droppedOps.map((x) => x.reason))],
        firstDropped: verified.droppedOps.slice(0, 10),
      },
      'governance log re-verified on start: ops that fail verification were dropped and state re-derived',
    );
  }
  const network = d.network;
  let invitations: InvitationService | undefined;
  const replicator =
    network && d.router
      ? new GovernanceReplicator({
          governance,
          network,
          router: d.router,
          clock,
          logger: d.logger,
          // pending joins retry on every peer connection and heartbeat
          onTick: async () => void (await invitations?.resolvePending()),
          onDialed: d.onDialed,
        })
      : undefined;
  const namespaces = new NamespaceService({ governance, identity, clock });
  const groups = new GroupService({ governance, identity, namespaces });
  const namespaceManage = new NamespaceManageService({ governance, namespaces, groups, identity, clock });
  invitations = new InvitationService({ governance, identity, clock, store, remote: replicator, addresses: network ? () => network.addresses() : undefined });
  const settings = new SettingsService({ governance, identity });
  const members = new MembersService({ governance, identity });
  const owner = new OwnerService({ governance, identity });
  const signingKeys = new SigningKeyService({ store, governance, identity, clock });
  const services = { governance, identity, clock, namespaces, groups, namespaceManage, settings, members, owner, invitations, sync: replicator };
  return {
    name: 'governance',
    governance,
    namespaces,
    groups,
    namespaceManage,
    settings,
    members,
    owner,
    invitations,
    signingKeys,
    replicator,
    // two groups: the route table mounts the signing keys' after the TEE routes, where they always were
    routes: {
      governance: (app) => registerGovernanceRoutes(app, { ...services, ...d.routeDeps() }),
      'signing-keys': (app) => registerSigningKeyRoutes(app, { signingKeys }),
    },
    metrics: () => (replicator ? replicationSeries(replicator.stats) : []),
    start: () => replicator?.start(),
    stop: async () => {
      await replicator?.stop();
    },
  };
}

// What the other folders use of this domain: they import it only through this face (issue #35).
export type { ApplierRegistry, ApplyContext, OpRegistration } from './appliers.ts';
export { groupOf, groupPathVia, inheritedAnchor, isAdmin, isMember, requireCapability, requireMember, subtree } from './authority.ts';
export { authorshipGrant, requireAuthorship } from './authorship.ts';
export { canonicalJson } from './canonical.ts';
export { OpDag } from './dag.ts';
export { MEMBER_OPS } from './groups/members-ops.ts';
export { MembersService } from './groups/members-service.ts';
export { GroupParams } from './groups/schemas.ts';
export { removedFrom } from './invitations/admission.ts';
export { InvitationService } from './invitations/service.ts';
export { Governance } from './log.ts';
export type { OpsApplied } from './log.ts';
export { inAccountScope } from './namespaces/scope.ts';
export { NamespaceService } from './namespaces/service.ts';
export { createAppliers } from './ops.ts';
export { peerSpeaksForMember } from './peer-membership.ts';
export { recordAccountRoot } from './proofs/roots.ts';
export { GovernanceReplicator } from './replication/replicator.ts';
export { replicationView } from './replication/view.ts';
export { accountOfKey, speaksFor } from './signers.ts';
export type { DeviceBinding, GroupState, NamespaceState } from './types.ts';
export { effectiveMembers } from './views.ts';
