/**
 * The route table: every domain's routes are mounted here, in one place (style rule 2), behind
 * the node guard. It lives in the composition root, which knows every part; src/http/ knows none
 * of the domains (docs/architecture.md).
 */
import type { FastifyInstance } from 'fastify';
import { type AliasesDomain, registerAliasRoutes } from '../aliases/index.ts';
import { type AuthDomain, type AuthRoutesDeps, needsToken, registerAuthRoutes, registerGuard } from '../auth/index.ts';
import { type BlobRoutesDeps, type BlobsDomain, registerBlobRoutes } from '../blobs/index.ts';
import {
  type ApplicationRoutesDeps,
  type ApplicationsDomain,
  type DevBundleDeps,
  registerApplicationRoutes,
  registerBundleUploadRoute,
  registerDevBundleRoute,
} from '../applications/index.ts';
import {
  type GovernanceDomain,
  type GovernanceRouteDeps,
  groupPathVia,
  registerGovernanceRoutes,
  registerSigningKeyRoutes,
  replicationView,
  type SigningKeyService,
} from '../governance/index.ts';
import { type EventRoutesDeps, type EventsDomain, registerEventRoutes } from '../events/index.ts';
import { type Contexts, type ContextsRouteDeps, registerContextsRoutes } from '../contexts/index.ts';
import { type AccountsDomain, type AccountService, registerAccountRoutes, registerIdentityRoutes } from '../accounts/index.ts';
import { registerDashboardRoutes } from '../dashboard/routes.ts';
import { registerSyncRoutes, type SpecializedInvites, type SyncDomain } from '../sync/index.ts';
import type { Store } from '../store/store.ts';
import { registerTeeRoutes, type TeeDomain, type TeeService } from '../tee/index.ts';
import { GroupUpgradeStatus, registerUpgradeRoutes, type UpgradesDomain, type UpgradeService } from '../upgrades/index.ts';
import { type DelegationDomain, type DelegationRouteDeps, registerDelegationRoutes } from '../delegation/index.ts';
import { registerHealthRoutes, type Lifecycle } from '../http/health-routes.ts';
import { registerMetricsRoute, type Metrics } from '../http/metrics.ts';
import { registerOpenApiRoute, type RouteCatalogue } from '../http/openapi.ts';
import { libp2pPeerIdOf, type NetworkDomain, type NetworkRoutesDeps, registerNetworkRoutes } from '../network/index.ts';
import type { NodeIdentity } from '../identity/identity.ts';
import type { Clock } from '../clock.ts';
import type { NodeConfig } from '../config/config.ts';
import { VERSION } from '../version.ts';

export interface RouteDeps {
  auth: AuthRoutesDeps;
  store: Store;
  lifecycle: () => Lifecycle;
  peerCount: () => number;
  network: NetworkRoutesDeps;
  blobs: BlobRoutesDeps;
  aliases: AliasesDomain;
  applications: ApplicationRoutesDeps;
  /** hearth's `PUT /admin-api/dev-bundle` (the node's development signing key) */
  devBundle: DevBundleDeps;
  /** governance's deps; its `accounts` is the whole AccountService, which the account routes mount too */
  governance: GovernanceRouteDeps & { accounts: AccountService };
  events: EventRoutesDeps;
  contexts: ContextsRouteDeps;
  tee: { tee: TeeService };
  signingKeys: { signingKeys: SigningKeyService };
  upgrades: { upgrades: UpgradeService };
  delegation: DelegationRouteDeps;
  /** context sync's routes (specialized-node invitations); absent parts answer 503 */
  sync?: { specialized?: SpecializedInvites };
  metrics: Metrics;
  catalogue: RouteCatalogue;
  /** `admin.delegated_access`: the delegated-execution routes are public (admin spec "Authentication" rule 3) */
  delegatedAccess?: boolean;
}

export function registerRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { governance } = deps.governance;
  const guardOptions = { delegatedAccess: deps.delegatedAccess ?? false };
  deps.catalogue.needsToken = (method, url) => needsToken(method, url, guardOptions);
  registerGuard(app, deps.auth.auth, { ...guardOptions, groupPath: groupPathVia((id) => governance.locate(id)) });
  registerHealthRoutes(app, deps);
  registerNetworkRoutes(app, deps.network);
  registerMetricsRoute(app, deps.metrics);
  registerOpenApiRoute(app, deps.catalogue);
  registerAuthRoutes(app, deps.auth);
  registerBlobRoutes(app, deps.blobs);
  registerApplicationRoutes(app, deps.applications);
  registerBundleUploadRoute(app, deps.applications);
  registerDevBundleRoute(app, deps.devBundle);
  registerAliasRoutes(app, deps.aliases);
  registerIdentityRoutes(app, { identity: deps.governance.identity, accounts: deps.governance.accounts });
  registerAccountRoutes(app, { accounts: deps.governance.accounts });
  registerGovernanceRoutes(app, deps.governance);
  registerEventRoutes(app, deps.events);
  registerContextsRoutes(app, deps.contexts);
  registerTeeRoutes(app, deps.tee);
  registerSigningKeyRoutes(app, deps.signingKeys);
  registerUpgradeRoutes(app, deps.upgrades);
  registerDelegationRoutes(app, deps.delegation);
  registerDashboardRoutes(app);
  registerSyncRoutes(app, deps.sync ?? {});
}

/** The domains' faces the route table reads (node.ts builds them when the node opens). */
export interface NodeParts {
  identity: NodeIdentity;
  auth: AuthDomain;
  accounts: AccountsDomain;
  aliases: AliasesDomain;
  network: NetworkDomain;
  blobs: BlobsDomain;
  applications: ApplicationsDomain;
  governance: GovernanceDomain;
  contexts: Contexts;
  events: EventsDomain;
  tee: TeeDomain;
  upgrades: UpgradesDomain;
  delegation: DelegationDomain;
  sync: SyncDomain;
}

/** What the route table takes from the node itself rather than a domain. */
export interface NodeRouteDeps {
  config: NodeConfig;
  clock: Clock;
  store: Store;
  metrics: Metrics;
  catalogue: RouteCatalogue;
  lifecycle: () => Lifecycle;
}

/** Each domain's route deps, from its face. */
export function routeDepsOf(p: NodeParts, n: NodeRouteDeps): RouteDeps {
  const { config, clock } = n;
  const { governance: gov, contexts, network } = p;
  return {
    catalogue: n.catalogue,
    delegatedAccess: config.admin.delegatedAccess,
    metrics: n.metrics,
    store: n.store,
    lifecycle: n.lifecycle,
    // a standalone node (no network) answers 0, as the reference without a swarm
    peerCount: () => network.net?.peerCount() ?? 0,
    network: {
      status: () => network.net?.status(),
      peerId: libp2pPeerIdOf(p.identity.publicKey),
      replication: gov.replicator ? () => replicationView(gov.replicator!) : undefined,
    },
    blobs: { blobs: p.blobs.blobs },
    aliases: p.aliases,
    events: p.events.routes,
    contexts: { ...contexts, onRpcOutcome: (outcome) => n.metrics.jsonrpc(outcome), rpcMethods: p.events.contextRpcMethods },
    applications: { applications: p.applications.applications },
    devBundle: p.applications.devBundle,
    tee: { tee: p.tee.tee },
    signingKeys: { signingKeys: gov.signingKeys },
    upgrades: { upgrades: p.upgrades.upgrades },
    delegation: { intents: p.delegation.intents, groupIntents: p.delegation.groupIntents },
    sync: { specialized: p.sync.specialized },
    governance: {
      governance: gov.governance,
      identity: p.identity,
      clock,
      namespaces: gov.namespaces,
      groups: gov.groups,
      namespaceManage: gov.namespaceManage,
      accounts: p.accounts.accounts,
      settings: gov.settings,
      members: gov.members,
      owner: gov.owner,
      invitations: gov.invitations,
      sync: gov.replicator,
      contextUsage: (id) => contexts.contexts.usage(id),
      // GroupInfo `activeUpgrade`: the group's upgrade while it is in progress on this node
      groupInfoFields: { activeUpgrade: { schema: GroupUpgradeStatus, read: (groupId) => p.upgrades.upgrades.activeUpgrade(groupId) } },
    },
    auth: {
      auth: p.auth.auth,
      keys: p.auth.keys,
      store: n.store,
      clock,
      startedAt: clock.now(),
      development: config.node.development,
      version: VERSION,
      allowedCallbackOrigins: config.auth.allowedCallbackOrigins,
    },
  };
}
