/** Mounts the auth surface: `/auth/*` (public) and `/admin/*` (key administration). */
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../clock.ts';
import type { Store } from '../store/store.ts';
import { registerAdminAuthRoutes } from './admin-routes.ts';
import type { KeysService } from './keys-service.ts';
import { registerLoginPage } from './login-page.ts';
import { registerPublicAuthRoutes } from './public-routes.ts';
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

export function registerAuthRoutes(app: FastifyInstance, deps: AuthRoutesDeps): void {
  registerPublicAuthRoutes(app, deps);
  registerAdminAuthRoutes(app, deps);
  registerLoginPage(app, deps);
}
