/**
 * The TEE domain's face: TEE information and attestation through the provider `[tee] provider`
 * names (loaded from the node's home; none by default) (docs/tee.md).
 *
 * @example
 * const tee = await createTee({ provider: config.tee.provider, homeDir: paths.dir, identity, applications });
 */
import { loadTeeBackend } from './provider.ts';
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
}

export async function createTee(d: TeeDomainDeps): Promise<TeeDomain> {
  const backend = await loadTeeBackend(d.provider, d.homeDir);
  return { name: 'tee', tee: new TeeService({ backend, identity: d.identity, applications: d.applications }) };
}

// What the other folders use of this domain: they import it only through this face (issue #35).
export { registerTeeRoutes } from './routes.ts';
export type { TeeService } from './service.ts';
