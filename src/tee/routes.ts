/**
 * `GET /tee/info`, `POST /tee/attest`, `POST /tee/registration-attest` (admin spec "TEE and
 * network"; admin-wire-b §9): parse, call, shape. The first two are public (route-permissions.ts),
 * as the reference routes them. `POST /tee/verify-quote` is not served: the spec removed it.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Errors } from '../http/response-schemas.ts';
import { TeeAttestAnswer, TeeAttestRequest, TeeInfoAnswer, TeeRegistrationAttestRequest } from './schemas.ts';
import type { TeeService } from './service.ts';

export function registerTeeRoutes(root: FastifyInstance, deps: { tee: TeeService }): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const { tee } = deps;
  // 501: no TEE here or the configured provider is missing; 502/504: the provider failed or stalled;
  // 503: too many quotes in flight (TEE_MAX_QUOTES_IN_FLIGHT)
  const unavailable = [501, 502, 503, 504];

  app.get('/admin-api/tee/info', { schema: { summary: 'What TEE this node runs in (501 naming why on a node without one)', response: { 200: TeeInfoAnswer, ...Errors(...unavailable) } } }, async () => ({
    data: await tee.info(),
  }));

  app.post(
    '/admin-api/tee/attest',
    { schema: { summary: 'A quote binding a nonce (and optionally an application or the node key)', body: TeeAttestRequest, response: { 200: TeeAttestAnswer, ...Errors(400, 404, 409, ...unavailable) } } },
    async (req) => ({ data: await tee.attest(req.body) }),
  );

  app.post(
    '/admin-api/tee/registration-attest',
    {
      schema: {
        summary: 'A quote binding a nonce to this node’s registration (account and signing key)',
        body: TeeRegistrationAttestRequest,
        response: { 200: TeeAttestAnswer, ...Errors(400, 401, 403, ...unavailable) },
      },
    },
    async (req) => ({ data: await tee.registrationAttest(req.body) }),
  );
}
