/**
 * Builds the applications catalogue from the node configuration (`[registry]`, `[applications]`),
 * so the composition root wires it with one call.
 */
import type { BlobStore } from '../blobs/store.ts';
import type { NodeConfig } from '../config/config.ts';
import type { Store } from '../store/store.ts';
import { ApplicationRegistry, DirectoryRegistry, HttpRegistry, type RegistrySource } from './registry.ts';
import { ApplicationService } from './service.ts';

export interface ApplicationsDeps {
  store: Store;
  blobs: BlobStore;
  config: Pick<NodeConfig, 'registry' | 'applications'>;
  now?: () => number;
}

export function registryFromConfig(config: NodeConfig['registry']): ApplicationRegistry {
  const sources: RegistrySource[] = [];
  if (config.dir) sources.push(new DirectoryRegistry(config.dir));
  if (config.url) sources.push(new HttpRegistry(config.url));
  return new ApplicationRegistry({ sources, timeoutMs: config.timeoutSecs * 1000 });
}

export function createApplications(deps: ApplicationsDeps): ApplicationService {
  return new ApplicationService({
    store: deps.store,
    blobs: deps.blobs,
    registry: registryFromConfig(deps.config.registry),
    devInstallRoot: deps.config.applications.devInstallRoot || undefined,
    now: deps.now,
  });
}
