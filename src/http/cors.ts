/**
 * CORS as the reference node applies it to every route (admin-wire-a §1.6, auth-wire §8.3): any
 * origin unless an allow-list is configured, any request header, and the auth headers exposed on
 * every answer (error answers included: browsers hide `x-auth-error` otherwise, product.md A1).
 */
import type { FastifyInstance } from 'fastify';

export const EXPOSED_HEADERS = [
  'x-auth-error',
  'x-auth-user',
  'x-auth-permissions',
  'x-request-id',
  'retry-after',
].join(', ');

const ALLOWED_METHODS = 'POST, GET, DELETE, PUT, OPTIONS, HEAD';

export function registerCors(app: FastifyInstance, allowedOrigins: string[]): void {
  const allowOrigin = (origin: string | undefined): string | undefined => {
    if (allowedOrigins.length === 0) return '*';
    return origin && allowedOrigins.includes(origin) ? origin : undefined;
  };

  app.addHook('onSend', async (request, reply, payload) => {
    const origin = allowOrigin(request.headers.origin);
    if (origin) {
      reply.header('access-control-allow-origin', origin);
      if (origin !== '*') reply.header('vary', 'Origin');
    }
    if (!reply.hasHeader('access-control-expose-headers')) reply.header('access-control-expose-headers', EXPOSED_HEADERS);
    return payload;
  });

  // Preflights never reach the guard or the routes.
  app.route({
    method: 'OPTIONS',
    url: '*',
    config: {},
    handler: async (request, reply) => {
      reply.header('access-control-allow-methods', ALLOWED_METHODS);
      reply.header('access-control-allow-headers', request.headers['access-control-request-headers'] ?? '*');
      reply.header('access-control-max-age', '600');
      if (request.headers['access-control-request-private-network'] === 'true') {
        reply.header('access-control-allow-private-network', 'true');
      }
      return reply.code(204).send();
    },
  });
}
