/**
 * The route table: every route of the node is mounted here, in one place (style rule 2), behind
 * the node guard: the node's own routes (health, metrics, the OpenAPI document, the dashboard) and
 * each domain's route groups, which its face closed over their deps (`Domain.routes`). It lives in
 * the composition root, which knows every part; src/http/ knows none of the domains
 * (docs/architecture.md).
 */
import type { FastifyInstance } from 'fastify';
import { type AuthDomain, needsToken, registerGuard } from '../auth/index.ts';
import { registerDashboardRoutes } from '../dashboard/routes.ts';
import { type GovernanceDomain, groupPathVia } from '../governance/index.ts';
import { registerHealthRoutes, type HealthDeps } from '../http/health-routes.ts';
import { registerMetricsRoute, type Metrics } from '../http/metrics.ts';
import { registerOpenApiRoute, type RouteCatalogue } from '../http/openapi.ts';
import type { MountRoutes } from '../http/route-groups.ts';
import type { Domain } from './domain.ts';

/**
 * The order the route groups are mounted in. The OpenAPI document lists the routes in the order
 * they were registered, so this keeps the order the table had before the domains mounted their own
 * routes (and the document as it was). A group not named here — a new domain's — is mounted after
 * these, in the order of the domain list: adding a domain needs no line here.
 */
export const MOUNT_ORDER: readonly string[] = [
  'health',
  'network',
  'metrics',
  'openapi',
  'auth',
  'blobs',
  'applications',
  'aliases',
  'accounts',
  'governance',
  'events',
  'contexts',
  'tee',
  'signing-keys',
  'upgrades',
  'delegation',
  'dashboard',
  'sync',
];

/** What the route table takes from the node itself rather than from a domain's routes. */
export interface RouteTableDeps extends HealthDeps {
  metrics: Metrics;
  catalogue: RouteCatalogue;
  /** the guard's token check */
  auth: AuthDomain['auth'];
  /** where a group sits (the guard's group-scoped permissions) */
  locateGroup: GovernanceDomain['governance']['locate'];
  /** `admin.delegated_access`: the delegated-execution routes are public (admin spec "Authentication" rule 3) */
  delegatedAccess: boolean;
  /** the node's domains, in list order: each one's route groups are mounted */
  domains: readonly Domain[];
}

export function registerRoutes(app: FastifyInstance, deps: RouteTableDeps): void {
  const guardOptions = { delegatedAccess: deps.delegatedAccess };
  deps.catalogue.needsToken = (method, url) => needsToken(method, url, guardOptions);
  registerGuard(app, deps.auth, { ...guardOptions, groupPath: groupPathVia(deps.locateGroup) });
  const node: Record<string, MountRoutes> = {
    health: (a) => registerHealthRoutes(a, deps),
    metrics: (a) => registerMetricsRoute(a, deps.metrics),
    openapi: (a) => registerOpenApiRoute(a, deps.catalogue),
    dashboard: (a) => registerDashboardRoutes(a),
  };
  for (const [, mount] of mountOrder(node, deps.domains)) mount(app);
}

/**
 * Every route group, the node's and the domains', in the order they are mounted: those MOUNT_ORDER
 * names first, in its order, then the rest in list order. Two groups of one name are refused.
 */
export function mountOrder(node: Readonly<Record<string, MountRoutes>>, domains: readonly Domain[]): [name: string, mount: MountRoutes][] {
  const groups = new Map<string, MountRoutes>(Object.entries(node));
  for (const domain of domains) {
    for (const [name, mount] of Object.entries(domain.routes ?? {})) {
      if (groups.has(name)) throw new Error(`two route groups are named "${name}" (domain ${domain.name})`);
      groups.set(name, mount);
    }
  }
  const named = MOUNT_ORDER.flatMap((name) => {
    const mount = groups.get(name);
    return mount ? [[name, mount] as [string, MountRoutes]] : [];
  });
  return [...named, ...[...groups].filter(([name]) => !MOUNT_ORDER.includes(name))];
}
