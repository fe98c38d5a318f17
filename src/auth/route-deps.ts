/**
 * What the auth routes are given (the face, index.ts, builds it from the domain's deps): a file of
 * its own, so the public, admin and login-page routes take the type from here and routes.ts, which
 * mounts them, is imported by none of them (issue #35: no import closes a circle).
 */
import type { Clock } from '../clock.ts';
import type { Store } from '../store/store.ts';
import type { KeysService } from './keys-service.ts';
import type { AuthService } from './service.ts';

export interface AuthRoutesDeps {
  auth: AuthService;
  keys: KeysService;
  store: Store;
  clock: Clock;
  startedAt: number;
  development: boolean;
  version: string;
  /** origins besides loopback and the node itself that the login page may hand tokens to */
  allowedCallbackOrigins: string[];
}
