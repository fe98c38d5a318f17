/**
 * The public half of the auth surface, under `/auth` (auth spec "Endpoints"; auth-wire §2.1–§2.5,
 * §11): health, providers, token issuance, refresh, logout, validation and development mock tokens.
 * Parse, call, shape the envelope — the logic lives in the services.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { notFound } from '../errors.ts';
import { bearerOf, originOf } from '../http/request.ts';
import type { AuthRoutesDeps } from './route-deps.ts';
import {
  AuthHealthResponse,
  LogoutRequest,
  MockTokenRequest,
  ProvidersResponse,
  RefreshRequest,
  SuccessResponse,
  TokenPairResponse,
  TokenRequest,
  ValidateResponse,
} from './schemas.ts';
import { Errors } from '../http/response-schemas.ts';
import { setSecurityHeaders } from './security-headers.ts';
import { ok, tokenBody } from './views.ts';

export function registerPublicAuthRoutes(root: FastifyInstance, deps: AuthRoutesDeps): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const config = { errorStyle: 'auth' as const };
  const { auth, keys, store, startedAt, clock, development } = deps;

  const healthSchema = { summary: 'Auth service health and uptime', response: { 200: AuthHealthResponse } };
  app.get('/auth/health', { config, schema: healthSchema }, async (_req, reply) => {
    setSecurityHeaders(reply);
    const storage = store.status().ok;
    return ok({
      status: storage ? 'alive' : 'not_alive',
      storage,
      uptime_seconds: Math.floor((clock.now() - startedAt) / 1000),
    });
  });

  const providersSchema = { summary: 'Login providers and whether each is configured', response: { 200: ProvidersResponse } };
  app.get('/auth/providers', { config, schema: providersSchema }, async (_req, reply) => {
    setSecurityHeaders(reply);
    const configured = await keys.hasUserPasswordAdmin();
    return ok({
      providers: [
        {
          name: 'user_password',
          type: 'credentials',
          description: 'Authenticates users with username and password credentials',
          configured,
          config: { enabled: true, description: 'Username and password authentication' },
        },
      ],
      count: 1,
    });
  });

  app.post('/auth/token', { config, schema: { summary: 'Log in with a provider (user_password)', body: TokenRequest, response: { 200: TokenPairResponse, ...Errors(400, 401, 429) } } }, async (req, reply) => {
    setSecurityHeaders(reply);
    return tokenBody(await auth.login(req.body, originOf(req)));
  });

  const refreshSchema = {
    summary: 'Exchange an expired access token and its single-use refresh token for a new pair',
    body: RefreshRequest,
    response: { 200: TokenPairResponse, ...Errors(400, 401, 403) },
  };
  app.post('/auth/refresh', { config, schema: refreshSchema }, async (req, reply) => {
    setSecurityHeaders(reply);
    return tokenBody(await auth.refresh(req.body.access_token, req.body.refresh_token, originOf(req)));
  });

  const logoutSchema = { summary: 'Retire a refresh token', body: LogoutRequest, response: { 200: SuccessResponse, ...Errors(400, 401) } };
  app.post('/auth/logout', { config, schema: logoutSchema }, async (req, reply) => {
    setSecurityHeaders(reply);
    await auth.logout(req.body.refresh_token);
    return ok({ success: true });
  });

  const validate = async (req: FastifyRequest, reply: FastifyReply) => {
    setSecurityHeaders(reply);
    const claims = await auth.validate(bearerOf(req) ?? forwardedUriToken(req), originOf(req));
    reply.header('x-auth-user', claims.sub);
    if (claims.permissions.length > 0) reply.header('x-auth-permissions', claims.permissions.join(','));
    return ok('' as const);
  };
  // HEAD is answered by the GET route without a body (fastify's exposeHeadRoute).
  const validateSchema = {
    summary: 'Forward-auth check of the bearer token (or the token= of X-Forwarded-Uri)',
    response: { 200: ValidateResponse, ...Errors(401, 403) },
  };
  app.get('/auth/validate', { config, schema: validateSchema }, validate);
  app.post('/auth/validate', { config, schema: validateSchema }, validate);

  const mockSchema = {
    summary: 'Mint a token pair for a new mock root key (development nodes only; 404 elsewhere)',
    body: MockTokenRequest,
    response: { 200: TokenPairResponse, ...Errors(400, 404) },
  };
  app.post('/auth/mock-token', { config, schema: mockSchema }, async (req, reply) => {
    setSecurityHeaders(reply);
    if (!development) {
      throw notFound('Mock tokens are issued only by development nodes (hearth init --dev)');
    }
    const { pair, keyId } = await auth.mock(req.body);
    reply.header('x-mock-token', 'true').header('x-key-id', keyId).header('x-warning', 'Mock token - for testing only');
    return tokenBody(pair);
  });
}

/** Reverse proxies doing forward-auth pass the original URI (auth-wire §2.3). */
function forwardedUriToken(req: FastifyRequest): string | undefined {
  const uri = req.headers['x-forwarded-uri'];
  const value = Array.isArray(uri) ? uri[0] : uri;
  if (!value) return undefined;
  const q = value.indexOf('?');
  return q === -1 ? undefined : new URLSearchParams(value.slice(q + 1)).get('token') ?? undefined;
}
