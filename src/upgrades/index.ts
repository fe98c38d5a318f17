/**
 * The upgrades domain's face: group upgrades and this node's migrations (`UpgradeService`),
 * started with the node (it resumes migrations in progress and follows `UpgradeApplied` on the
 * bus); a migration waiting for its target version here resumes once that version is installed.
 *
 * @example
 * const upgrades = createUpgrades({ store, governance, contexts, applications, identity, bus, clock, logger });
 */
import type { Logger } from 'pino';
import type { ApplicationService } from '../applications/index.ts';
import type { RouteGroups } from '../http/route-groups.ts';
import { registerUpgradeRoutes } from './routes.ts';
import { UpgradeService, type UpgradeServiceDeps } from './service.ts';

export { registerUpgradeOps } from './ops.ts';

export interface UpgradesDeps extends Omit<UpgradeServiceDeps, 'onError' | 'applications'> {
  applications: ApplicationService;
  logger: Logger;
}

export interface UpgradesDomain {
  readonly name: 'upgrades';
  upgrades: UpgradeService;
  routes: RouteGroups;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createUpgrades(d: UpgradesDeps): UpgradesDomain {
  const { logger, ...deps } = d;
  const upgrades = new UpgradeService({ ...deps, onError: (err) => logger.error({ err }, 'migration failed') });
  // a migration waiting for the target version here resumes once it is installed
  d.applications.onInstalled((r) => void upgrades.bundleInstalled(r.bundleBlobId).catch((err: unknown) => logger.error({ err }, 'resuming migrations failed')));
  return { name: 'upgrades', upgrades, routes: { upgrades: (app) => registerUpgradeRoutes(app, { upgrades }) }, start: () => upgrades.start(), stop: () => upgrades.stop() };
}

// What the other folders use of this domain: they import it only through this face (issue #35).
export { GroupUpgradeStatus } from './schemas.ts';
