/**
 * The node guard over `/admin-api/*`, `/jsonrpc`, `/ws`, `/sse` and `/sse/*` (auth-wire §5; auth
 * spec "Authentication"). It runs on every request under those prefixes — also for routes no issue
 * has registered yet, so later work only adds handlers. A valid token, the route's permission, and
 * for client keys bound to contexts or groups, a target inside the binding; otherwise 401/403 with
 * the reason in `X-Auth-Error`.
 */
import type { FastifyInstance } from 'fastify';
import { isBound, mayActOn, type MayActOptions } from '../auth/binding.ts';
import { satisfies } from '../auth/permissions.ts';
import { classifyRoute, type RouteOptions } from '../auth/route-permissions.ts';
import type { AuthService } from '../auth/service.ts';
import { forbidden, unauthenticated } from '../errors.ts';
import { bearerOf, originOf, pathOf, queryTokenOf } from './request.ts';

/** The auth spec accepts `?token=` only on the stream routes (a URL reaches proxy logs). */
const QUERY_TOKEN_PATHS = /^\/(ws|sse)(\/|$)/;

export interface GuardOptions extends RouteOptions {
  /** a group's way up to its namespace root: group-bound keys reach open subgroups (binding.ts) */
  groupPath?: MayActOptions['groupPath'];
}

export function registerGuard(app: FastifyInstance, auth: AuthService, options: GuardOptions = {}): void {
  app.addHook('onRequest', async (req) => {
    const path = pathOf(req);
    const decision = classifyRoute(req.method, path, options);
    if (decision.kind !== 'guarded') return;
    const token = bearerOf(req) ?? (QUERY_TOKEN_PATHS.test(path) ? queryTokenOf(req) : undefined);
    if (!token) throw unauthenticated('Missing bearer token: send Authorization: Bearer <access token>', 'missing_token');
    const principal = await auth.authenticate(token, originOf(req));
    if (decision.permission && !satisfies(principal.permissions, decision.permission)) {
      throw forbidden(`This route needs the ${decision.permission} permission`, 'permission_denied');
    }
    if (isBound(principal.binding) && decision.bindingChecked === 'route' && !mayActOn(principal.binding, decision.target, { groupPath: options.groupPath })) {
      throw forbidden('This client key is bound to other contexts or groups', 'permission_denied');
    }
    req.principal = principal;
  });
}
