/**
 * The node guard over `/admin-api/*`, `/jsonrpc`, `/ws`, `/sse` and `/sse/*` (auth-wire §5; auth
 * spec "Authentication"). It runs on every request under those prefixes — also for routes no issue
 * has registered yet, so later work only adds handlers. A valid token, the route's permission, and
 * for client keys bound to contexts or groups, a target inside the binding; otherwise 401/403 with
 * the reason in `X-Auth-Error`.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isBound, mayActOn, type MayActOptions } from './binding.ts';
import { satisfies } from './permissions.ts';
import { classifyRoute, type GuardDecision, type RouteOptions } from './route-permissions.ts';
import type { AuthService, Principal } from './service.ts';
import { forbidden, unauthenticated } from '../errors.ts';
import { bearerOf, originOf, pathOf, queryTokenOf, type RequestOrigin } from '../http/request.ts';

/** The auth spec accepts `?token=` only on the stream routes (a URL reaches proxy logs). */
const QUERY_TOKEN_PATHS = /^\/(ws|sse)(\/|$)/;
/** path decisions remembered per method: classifying a path was a visible part of a guarded request */
const DECISIONS_KEPT = 1_000;
/** distinct methods remembered (Node's parser accepts only its known methods; a bound all the same) */
const METHODS_KEPT = 64;
/** longer paths are classified each time (a long path is rare, and would make the memo heavy) */
const MEMO_PATH_MAX = 256;

export interface GuardOptions extends RouteOptions {
  /** a group's way up to its namespace root: group-bound keys reach open subgroups (binding.ts) */
  groupPath?: MayActOptions['groupPath'];
}

export function registerGuard(app: FastifyInstance, auth: AuthService, options: GuardOptions = {}): void {
  // the decision depends only on (method, path): the options are fixed for the guard's life
  // method → path → decision (no key string built per request); bounded per method
  const decisions = new Map<string, Map<string, GuardDecision>>();
  const classify = (method: string, path: string): GuardDecision => {
    if (path.length > MEMO_PATH_MAX) return classifyRoute(method, path, options);
    let byPath = decisions.get(method);
    if (byPath === undefined) {
      if (decisions.size >= METHODS_KEPT) decisions.clear(); // methods are client-chosen strings
      decisions.set(method, (byPath = new Map()));
    }
    let decision = byPath.get(path);
    if (decision === undefined) {
      decision = classifyRoute(method, path, options);
      if (byPath.size >= DECISIONS_KEPT) byPath.clear();
      byPath.set(path, decision);
    }
    return decision;
  };

  /** The route's permission and binding checks; throws the 403. */
  const check = (decision: GuardedDecision, principal: Principal): void => {
    if (decision.permission && !satisfies(principal.permissions, decision.permission)) {
      throw forbidden(`This route needs the ${decision.permission} permission`, 'permission_denied');
    }
    if (isBound(principal.binding) && decision.bindingChecked === 'route' && !mayActOn(principal.binding, decision.target, { groupPath: options.groupPath })) {
      throw forbidden('This client key is bound to other contexts or groups', 'permission_denied');
    }
  };
  const admit = (req: FastifyRequest, decision: GuardedDecision, principal: Principal): void => {
    check(decision, principal);
    req.principal = principal;
  };

  // The fast lanes' gate (http/fast-lane.ts): this hook's synchronous path on the raw request. A
  // lane serves only a guarded request whose token is cached and admitted; whatever this throws or
  // cannot decide at once goes the full way, through the hook below, which answers it. The lanes
  // never run behind a trusted proxy, so the host and address are the request's own.
  if (app.fastLanes) {
    app.fastLanes.gate = (req: IncomingMessage, path: string): Principal | undefined => {
      const decision = classify(req.method ?? '', path);
      if (decision.kind !== 'guarded') return undefined;
      const h = req.headers.authorization;
      const token = h?.startsWith('Bearer ') ? h.slice(7).trim() : '';
      if (!token) return undefined;
      const principal = auth.authenticateCached(token, { host: req.headers.host || undefined, address: req.socket.remoteAddress });
      if (principal) check(decision, principal);
      return principal;
    };
  }

  // Callback-style, with a synchronous path: a token verified before whose keys are cached (every
  // request of a client after its first) is decided without a promise (issue #14). Otherwise the
  // store is read; both paths answer the same (AuthService.authenticateCached).
  // `done()` is called outside the try blocks: the rest of the request runs inside it, and an error
  // there must not reach this hook's catch (which would answer the request a second time).
  app.addHook('onRequest', (req, _reply, done) => {
    let decision: GuardDecision;
    let token: string | undefined;
    let origin: RequestOrigin;
    let decided = false;
    try {
      const path = pathOf(req);
      decision = classify(req.method, path);
      if (decision.kind === 'guarded') {
        token = bearerOf(req) ?? (QUERY_TOKEN_PATHS.test(path) ? queryTokenOf(req) : undefined);
        if (!token) throw unauthenticated('Missing bearer token: send Authorization: Bearer <access token>', 'missing_token');
        origin = originOf(req);
        const principal = auth.authenticateCached(token, origin);
        if (principal) admit(req, decision, principal);
        decided = principal !== undefined;
      }
    } catch (err) {
      return done(err as Error);
    }
    if (decision.kind !== 'guarded' || decided) return done();
    const guarded = decision;
    auth.authenticate(token!, origin!).then(
      (principal) => {
        try {
          admit(req, guarded, principal);
        } catch (err) {
          return done(err as Error);
        }
        done();
      },
      (err: Error) => done(err),
    );
  });
}

type GuardedDecision = Extract<GuardDecision, { kind: 'guarded' }>;
