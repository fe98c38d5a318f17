/**
 * Root-key and client-key administration under `/admin` (auth spec "Endpoints"; auth-wire
 * §2.6–§2.15). Every route passes the admin middleware first: a bearer token, the permission of
 * the route (auth-wire §2, "intended" column), and no context-bound client keys.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { badRequest, forbidden, unauthenticated } from '../errors.ts';
import { bearerOf, originOf, pathOf } from '../http/request.ts';
import { isBound } from './binding.ts';
import { satisfies } from './permissions.ts';
import { classifyAdminRoute } from './route-permissions.ts';
import type { AuthRoutesDeps } from './route-deps.ts';
import { Errors } from '../http/response-schemas.ts';
import {
  ClientKeyRequest,
  ClientKeysQuery,
  ClientKeysResponse,
  ClientParams,
  CreateKeyRequest,
  CreateKeyResponse,
  DeleteClientResponse,
  DeleteKeyResponse,
  IdentityResponse,
  KeyIdParams,
  PermissionsResponse,
  RevokeRequest,
  RevokeResponse,
  RootKeysResponse,
  TokenPairResponse,
  UpdatePermissionsRequest,
} from './schemas.ts';
import { setSecurityHeaders } from './security-headers.ts';
import type { Principal } from './service.ts';
import { clientKeyView, ok, rootKeyView, tokenBody } from './views.ts';

/** `?details=true|false` (absent: false); anything else is named back. */
function detailsFlag(v: string | undefined): boolean {
  if (v === undefined || v === 'false') return false;
  if (v === 'true') return true;
  throw badRequest('Invalid details: expected true or false');
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

export function registerAdminAuthRoutes(root: FastifyInstance, deps: AuthRoutesDeps): void {
  root.register(async (scope) => {
    const app = scope.withTypeProvider<TypeBoxTypeProvider>();
    const config = { errorStyle: 'auth' as const };
    const { auth, keys, version } = deps;

    app.addHook('onRequest', async (req, reply) => {
      setSecurityHeaders(reply);
      const token = bearerOf(req);
      if (!token) throw unauthenticated('Missing bearer token: send Authorization: Bearer <access token>', 'missing_token');
      const principal = await auth.authenticate(token, originOf(req));
      const path = pathOf(req);
      const selfRevoke = req.method === 'POST' && path === '/admin/revoke';
      if (isBound(principal.binding) && !selfRevoke) {
        throw forbidden('This client key is bound to contexts or groups and may not administer keys', 'permission_denied');
      }
      const { permission } = classifyAdminRoute(req.method, path);
      if (permission && !selfRevoke && !satisfies(principal.permissions, permission)) {
        throw forbidden(`This route needs the ${permission} permission`, 'permission_denied');
      }
      reply.header('x-auth-user', principal.keyId);
      if (principal.permissions.length > 0) reply.header('x-auth-permissions', principal.permissions.join(','));
      req.principal = principal;
    });

    const principalOf = (req: FastifyRequest): Principal => req.principal as Principal;
    // Every route passes the middleware above: 401 without a valid token, 403 without the permission.
    const doc = (summary: string, ok: object, ...errors: number[]) => ({
      summary,
      response: { 200: ok, ...Errors(401, 403, ...errors) },
    });

    const identitySchema = doc('The auth service: name, version, mode, providers', IdentityResponse);
    app.get('/admin/identity', { config, schema: identitySchema }, async () =>
      ok({ service: 'hearth-auth', version, authentication_mode: 'embedded', providers: ['user_password'] }),
    );

    const revokeSchema = {
      ...doc('Revoke a key (any key with keys:delete; a key may always revoke itself)', RevokeResponse, 400, 404, 409),
      body: RevokeRequest,
    };
    app.post('/admin/revoke', { config, schema: revokeSchema }, async (req) => {
      await keys.revoke(principalOf(req), req.body.client_id);
      return ok({ success: true, message: 'Tokens revoked successfully' });
    });

    app.get('/admin/keys', { config, schema: doc('List root keys', RootKeysResponse) }, async () =>
      ok((await keys.listRootKeys()).map(rootKeyView)),
    );

    const createSchema = { ...doc('Create a user_password root key (a new password for a known username makes a second key)', CreateKeyResponse, 400), body: CreateKeyRequest };
    app.post('/admin/keys', { config, schema: createSchema }, async (req) => ok(await keys.createRootKey(req.body, principalOf(req))));

    const deleteSchema = {
      ...doc("Revoke a root key (409 for the last active admin key; 403 for a key the caller may not change: docs/security.md)", DeleteKeyResponse, 400, 404, 409),
      params: KeyIdParams,
    };
    app.delete('/admin/keys/:key_id', { config, schema: deleteSchema }, async (req) =>
      ok(await keys.deleteRootKey(principalOf(req), req.params.key_id)),
    );

    const getPermsSchema = { ...doc('Permissions of a root or client key', PermissionsResponse, 404), params: KeyIdParams };
    app.get('/admin/keys/:key_id/permissions', { config, schema: getPermsSchema }, async (req) =>
      ok({ permissions: await keys.getPermissions(req.params.key_id) }),
    );

    app.put(
      '/admin/keys/:key_id/permissions',
      {
        config,
        schema: {
          ...doc('Add and remove permissions of a key; answers the final list', PermissionsResponse, 400, 404, 409),
          params: KeyIdParams,
          body: UpdatePermissionsRequest,
        },
      },
      async (req) => {
        const permissions = await keys.updatePermissions(principalOf(req), req.params.key_id, req.body.add ?? [], req.body.remove ?? []);
        return ok({ permissions });
      },
    );

    const listClientsSchema = { ...doc('List client keys (`?details=true`, hearth: with expiry and bound application)', ClientKeysResponse), querystring: ClientKeysQuery };
    app.get('/admin/keys/clients', { config, schema: listClientsSchema }, async (req) => {
      const details = detailsFlag(req.query.details);
      return ok((await keys.listClientKeys()).map((k) => clientKeyView(k, details)));
    });

    const clientKeySchema = {
      ...doc('Mint a client key (optionally bound to a context or application) and its token pair; hearth: the header `X-Hearth-Session: sign-in` makes it a sign-in session key, which expires when unused for `[auth] sign_in_key_idle_secs`', TokenPairResponse, 400, 404),
      body: ClientKeyRequest,
    };
    app.post('/admin/client-key', { config, schema: clientKeySchema }, async (req) => {
      // the TokenResponse exactly (auth spec): the key's id is the access token's `sub`
      // hearth's header, not a body field: the login page marks a sign-in session's key (keys-service.ts)
      const { pair } = await keys.createClientKey(principalOf(req), req.body, { signIn: req.headers['x-hearth-session'] === 'sign-in' });
      return tokenBody(pair);
    });

    const deleteClientSchema = {
      ...doc('Revoke a client key of a root key', DeleteClientResponse, 400, 404),
      params: ClientParams,
    };
    app.delete('/admin/keys/:key_id/clients/:client_id', { config, schema: deleteClientSchema }, async (req) =>
      ok(await keys.deleteClientKey(req.params.key_id, req.params.client_id)),
    );
  });
}
