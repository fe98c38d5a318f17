/**
 * The auth domain's face: the token issuer, login and refresh (`AuthService`) and the key
 * management the admin API and the CLI use (`KeysService`), over the node's key store. Expired
 * keys are swept once here, when the node opens (auth-wire §3).
 *
 * @example
 * const auth = await createAuth({ keyStore, secret, clock, config: config.auth, store, development: false });
 * await auth.keys.hasUserPasswordAdmin();
 */
import { unixSecs, type Clock } from '../clock.ts';
import type { AuthConfig } from '../config/config.ts';
import type { RouteGroups } from '../http/route-groups.ts';
import type { Store } from '../store/store.ts';
import { VERSION } from '../version.ts';
import { KeysService } from './keys-service.ts';
import { registerAuthRoutes } from './routes.ts';
import { AuthService } from './service.ts';
import type { KeyStore } from './store.ts';
import { TokenIssuer } from './tokens.ts';

export interface AuthDomainDeps {
  keyStore: KeyStore;
  /** the node's token secret (`paths.tokenSecret`) */
  secret: string;
  clock: Clock;
  config: AuthConfig;
  /** the node's store (the auth routes' health answer reads it) */
  store: Store;
  /** a development node (`hearth init --dev`) issues mock tokens */
  development: boolean;
}

export interface AuthDomain {
  readonly name: 'auth';
  auth: AuthService;
  keys: KeysService;
  routes: RouteGroups;
}

export async function createAuth(d: AuthDomainDeps): Promise<AuthDomain> {
  const tokens = new TokenIssuer(d.secret, d.config.issuer, d.config.leewaySecs, d.clock);
  const auth = new AuthService({ keys: d.keyStore, tokens, clock: d.clock, config: d.config });
  const keys = new KeysService({ keys: d.keyStore, clock: d.clock, config: d.config, auth });
  await d.keyStore.sweep(unixSecs(d.clock));
  const { store, clock, development } = d;
  const allowedCallbackOrigins = d.config.allowedCallbackOrigins;
  // `startedAt`: when the routes are mounted, as the node starts (the auth health answer's uptime)
  const routes = { auth: (app) => registerAuthRoutes(app, { auth, keys, store, clock, startedAt: clock.now(), development, version: VERSION, allowedCallbackOrigins }) } satisfies RouteGroups;
  return { name: 'auth', auth, keys, routes };
}

// What the other folders use of this domain: they import it only through this face (issue #35).
export { isBound, mayActOn } from './binding.ts';
export type { MayActOptions } from './binding.ts';
export { registerGuard } from './guard.ts';
export { satisfies } from './permissions.ts';
export { needsToken } from './route-permissions.ts';
export type { Principal } from './service.ts';
export { KeyStore } from './store.ts';
