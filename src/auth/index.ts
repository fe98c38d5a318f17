/**
 * The auth domain's face: the token issuer, login and refresh (`AuthService`) and the key
 * management the admin API and the CLI use (`KeysService`), over the node's key store. Expired
 * keys are swept once here, when the node opens (auth-wire §3).
 *
 * @example
 * const auth = await createAuth({ keyStore, secret, clock, config: config.auth });
 * await auth.keys.hasUserPasswordAdmin();
 */
import { unixSecs, type Clock } from '../clock.ts';
import type { AuthConfig } from '../config/config.ts';
import { KeysService } from './keys-service.ts';
import { AuthService } from './service.ts';
import type { KeyStore } from './store.ts';
import { TokenIssuer } from './tokens.ts';

export interface AuthDomainDeps {
  keyStore: KeyStore;
  /** the node's token secret (`paths.tokenSecret`) */
  secret: string;
  clock: Clock;
  config: AuthConfig;
}

export interface AuthDomain {
  readonly name: 'auth';
  auth: AuthService;
  keys: KeysService;
}

export async function createAuth(d: AuthDomainDeps): Promise<AuthDomain> {
  const tokens = new TokenIssuer(d.secret, d.config.issuer, d.config.leewaySecs, d.clock);
  const auth = new AuthService({ keys: d.keyStore, tokens, clock: d.clock, config: d.config });
  const keys = new KeysService({ keys: d.keyStore, clock: d.clock, config: d.config, auth });
  await d.keyStore.sweep(unixSecs(d.clock));
  return { name: 'auth', auth, keys };
}

// What the other folders use of this domain: they import it only through this face (issue #35).
export { isBound, mayActOn } from './binding.ts';
export type { MayActOptions } from './binding.ts';
export { registerGuard } from './guard.ts';
export { satisfies } from './permissions.ts';
export type { AuthRoutesDeps } from './route-deps.ts';
export { needsToken } from './route-permissions.ts';
export { registerAuthRoutes } from './routes.ts';
export type { Principal } from './service.ts';
export { KeyStore } from './store.ts';
