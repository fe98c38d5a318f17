/**
 * Root-key and client-key administration under `/admin` (auth spec "Endpoints"; auth-wire
 * §2.6–§2.15). Every route passes the admin middleware first: a bearer token, the permission of
 * the route (auth-wire §2, "intended" column), and no context-bound client keys.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { forbidden, unauthenticated } from '../errors.ts';
import { bearerOf, hostOf, pathOf } from '../http/request.ts';
import { isBound } from './binding.ts';
import { satisfies } from './permissions.ts';
import { classifyAdminRoute } from './route-permissions.ts';
import type { AuthRoutesDeps } from './routes.ts';
import { ClientKeyRequest, ClientParams, CreateKeyRequest, KeyIdParams, RevokeRequest, UpdatePermissionsRequest } from './schemas.ts';
import { setSecurityHeaders } from './security-headers.ts';
import type { Principal } from './service.ts';
import { clientKeyView, ok, rootKeyView, tokenBody } from './views.ts';

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
      const principal = await auth.authenticate(token, hostOf(req));
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

    app.get('/admin/identity', { config }, async () =>
      ok({ service: 'hearth-auth', version, authentication_mode: 'embedded', providers: ['user_password'] }),
    );

    app.post('/admin/revoke', { config, schema: { body: RevokeRequest } }, async (req) => {
      await keys.revoke(principalOf(req), req.body.client_id);
      return ok({ success: true, message: 'Tokens revoked successfully' });
    });

    app.get('/admin/keys', { config }, async () => ok((await keys.listRootKeys()).map(rootKeyView)));

    app.post('/admin/keys', { config, schema: { body: CreateKeyRequest } }, async (req) => ok(await keys.createRootKey(req.body)));

    app.delete('/admin/keys/:key_id', { config, schema: { params: KeyIdParams } }, async (req) =>
      ok(await keys.deleteRootKey(req.params.key_id)),
    );

    app.get('/admin/keys/:key_id/permissions', { config, schema: { params: KeyIdParams } }, async (req) =>
      ok({ permissions: await keys.getPermissions(req.params.key_id) }),
    );

    app.put(
      '/admin/keys/:key_id/permissions',
      { config, schema: { params: KeyIdParams, body: UpdatePermissionsRequest } },
      async (req) => {
        const permissions = await keys.updatePermissions(principalOf(req), req.params.key_id, req.body.add ?? [], req.body.remove ?? []);
        return ok({ permissions });
      },
    );

    app.get('/admin/keys/clients', { config }, async () => ok((await keys.listClientKeys()).map(clientKeyView)));

    app.post('/admin/client-key', { config, schema: { body: ClientKeyRequest } }, async (req) => {
      const { pair, clientId } = await keys.createClientKey(principalOf(req), req.body);
      return tokenBody(pair, { client_id: clientId });
    });

    app.delete('/admin/keys/:key_id/clients/:client_id', { config, schema: { params: ClientParams } }, async (req) =>
      ok(await keys.deleteClientKey(req.params.key_id, req.params.client_id)),
    );
  });
}
