/** Mounts the auth surface: `/auth/*` (public) and `/admin/*` (key administration). */
import type { FastifyInstance } from 'fastify';
import { registerAdminAuthRoutes } from './admin-routes.ts';
import { registerLoginPage } from './login-page.ts';
import { registerPublicAuthRoutes } from './public-routes.ts';
import type { AuthRoutesDeps } from './route-deps.ts';

export function registerAuthRoutes(app: FastifyInstance, deps: AuthRoutesDeps): void {
  registerPublicAuthRoutes(app, deps);
  registerAdminAuthRoutes(app, deps);
  registerLoginPage(app, deps);
}
