/**
 * The route table: every domain's routes are mounted here, in one place (style rule 2), behind
 * the node guard. It lives in the composition root, which knows every part; src/http/ knows none
 * of the domains (docs/architecture.md).
 */
import type { FastifyInstance } from 'fastify';
import { registerAliasRoutes } from '../aliases/routes.ts';
import { registerAuthRoutes } from '../auth/routes.ts';
import { registerBlobRoutes, type BlobRoutesDeps } from '../blobs/routes.ts';
import { registerApplicationRoutes, type ApplicationRoutesDeps } from '../applications/routes.ts';
import { registerBundleUploadRoute } from '../applications/upload-route.ts';
import { registerDevBundleRoute, type DevBundleDeps } from '../applications/dev-bundle.ts';
import { registerGovernanceRoutes } from '../governance/routes.ts';
import { registerEventRoutes, type EventRoutesDeps } from '../events/routes.ts';
import { registerContextsRoutes, type ContextsRouteDeps } from '../contexts/index.ts';
import { registerIdentityRoutes } from '../accounts/routes.ts';
import { registerAccountRoutes } from '../accounts/account-routes.ts';
import type { AccountService } from '../accounts/service.ts';
import { groupPathVia } from '../governance/authority.ts';
import { registerDashboardRoutes } from '../dashboard/routes.ts';
import { registerSyncRoutes } from '../sync/routes.ts';
import type { SpecializedInvites } from '../sync/specialized.ts';
import type { Store } from '../store/store.ts';
import { registerTeeRoutes } from '../tee/routes.ts';
import { registerSigningKeyRoutes } from '../governance/signing-key/routes.ts';
import type { SigningKeyService } from '../governance/signing-key/service.ts';
import { registerUpgradeRoutes } from '../upgrades/routes.ts';
import type { UpgradeService } from '../upgrades/service.ts';
import { registerDelegationRoutes, type DelegationRouteDeps } from '../delegation/routes.ts';
import type { TeeService } from '../tee/service.ts';
import { registerGuard } from '../auth/guard.ts';
import { needsToken } from '../auth/route-permissions.ts';
import { registerHealthRoutes, type Lifecycle } from '../http/health-routes.ts';
import { registerMetricsRoute, type Metrics } from '../http/metrics.ts';
import { registerOpenApiRoute, type RouteCatalogue } from '../http/openapi.ts';
import { registerNetworkRoutes, type NetworkRoutesDeps } from '../network/routes.ts';
import type { AuthRoutesDeps } from '../auth/route-deps.ts';
import type { GovernanceRouteDeps } from '../governance/route-deps.ts';

export interface RouteDeps {
  auth: AuthRoutesDeps;
  store: Store;
  lifecycle: () => Lifecycle;
  peerCount: () => number;
  network: NetworkRoutesDeps;
  blobs: BlobRoutesDeps;
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
  registerAliasRoutes(app, { store: deps.store });
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
