/**
 * The applications domain's face: the catalogue of installed applications (the `ApplicationCatalog`
 * contexts and the runtime load wasm from), its registry sources from the node configuration
 * (`[registry]`, `[applications]`), and where the development signing key of `PUT
 * /admin-api/dev-bundle` lives.
 *
 * @example
 * const apps = createApplications({ store, blobs: blobStore, config, now, homeDir: paths.dir });
 * apps.applications.onInstalled((release) => …);
 */
import { join } from 'node:path';
import type { BlobStore } from '../blobs/index.ts';
import type { NodeConfig } from '../config/config.ts';
import type { RouteGroups } from '../http/route-groups.ts';
import type { Store } from '../store/store.ts';
import { DEV_SIGNING_KEY_FILE, registerDevBundleRoute, type DevBundleDeps } from './dev-bundle.ts';
import { ApplicationRegistry, DirectoryRegistry, HttpRegistry, type RegistrySource } from './registry.ts';
import { registerApplicationRoutes } from './routes.ts';
import { ApplicationService } from './service.ts';
import { registerBundleUploadRoute } from './upload-route.ts';

export interface ApplicationsDeps {
  store: Store;
  blobs: BlobStore;
  config: Pick<NodeConfig, 'registry' | 'applications'>;
  now?: () => number;
  /** the node's home directory, which keeps the development signing key */
  homeDir: string;
}

export interface ApplicationsDomain {
  readonly name: 'applications';
  applications: ApplicationService;
  /** hearth's `PUT /admin-api/dev-bundle`: the node's development signing key and install root */
  devBundle: DevBundleDeps;
  /** the catalogue's routes, the bundle upload and hearth's `PUT /admin-api/dev-bundle` */
  routes: RouteGroups;
}

export function registryFromConfig(config: NodeConfig['registry']): ApplicationRegistry {
  const sources: RegistrySource[] = [];
  if (config.dir) sources.push(new DirectoryRegistry(config.dir));
  if (config.url) sources.push(new HttpRegistry(config.url));
  return new ApplicationRegistry({ sources, timeoutMs: config.timeoutSecs * 1000 });
}

export function createApplications(deps: ApplicationsDeps): ApplicationsDomain {
  const devInstallRoot = deps.config.applications.devInstallRoot || undefined;
  const applications = new ApplicationService({
    store: deps.store,
    blobs: deps.blobs,
    registry: registryFromConfig(deps.config.registry),
    devInstallRoot,
    now: deps.now,
  });
  const devBundle = { keyPath: join(deps.homeDir, DEV_SIGNING_KEY_FILE), devInstallRoot };
  const routes = {
    applications: (app) => {
      registerApplicationRoutes(app, { applications });
      registerBundleUploadRoute(app, { applications });
      registerDevBundleRoute(app, devBundle);
    },
  } satisfies RouteGroups;
  return { name: 'applications', applications, devBundle, routes };
}

// What the other folders use of this domain: they import it only through this face (issue #35).
export type { ApplicationCatalog, InstalledApplication, InstalledRelease } from './catalog.ts';
export { MAX_BUNDLE_BYTES } from './constants.ts';
export { compareVersions } from './semver.ts';
export type { ApplicationService } from './service.ts';
