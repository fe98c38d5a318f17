/**
 * The TEE domain's face: TEE information and attestation through the provider `[tee] provider`
 * names (loaded from the node's home; none by default) (docs/tee.md).
 *
 * @example
 * const tee = await createTee({ provider: config.tee.provider, homeDir: paths.dir, identity, applications });
 */
import type { RouteGroups } from '../http/route-groups.ts';
import { loadTeeBackend } from './provider.ts';
import { registerTeeRoutes } from './routes.ts';
import { TeeService, type TeeServiceDeps } from './service.ts';

export interface TeeDomainDeps extends Omit<TeeServiceDeps, 'backend'> {
  /** `[tee] provider` */
  provider: string;
  /** the node's home, where a provider module may live */
  homeDir: string;
}

export interface TeeDomain {
  readonly name: 'tee';
  tee: TeeService;
  routes: RouteGroups;
}

export async function createTee(d: TeeDomainDeps): Promise<TeeDomain> {
  const backend = await loadTeeBackend(d.provider, d.homeDir);
  const tee = new TeeService({ backend, identity: d.identity, applications: d.applications });
  return { name: 'tee', tee, routes: { tee: (app) => registerTeeRoutes(app, { tee }) } };
}
