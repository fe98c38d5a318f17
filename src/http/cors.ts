/**
 * CORS (admin-wire-a §1.6, auth-wire §8.3; hardened by issue #17 finding 5). The reference answers
 * every origin with `*` and grants the private-network preflight, which lets any web page the
 * operator visits drive a node on their machine. Here browsers are answered only for allowed
 * origins, from `server.cors_allowed_origins`:
 *
 * - this node's own origin (the dashboard and login page it serves) is always allowed;
 * - an empty list (the default) also allows loopback origins on any port (`http://localhost:5173`,
 *   `http://127.0.0.1:3000`, `http://[::1]:8080`): local development servers;
 * - a non-empty list allows exactly its origins; `*` in it allows every origin (the reference's
 *   behaviour, an explicit opt-in).
 *
 * The auth headers are exposed on every answer (error answers included: browsers hide
 * `x-auth-error` otherwise, product.md A1). Requests without an `Origin` header (non-browser
 * clients) are unaffected.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

export const EXPOSED_HEADERS = [
  'x-auth-error',
  'x-auth-user',
  'x-auth-permissions',
  'x-request-id',
  'retry-after',
].join(', ');

const ALLOWED_METHODS = 'POST, GET, DELETE, PUT, OPTIONS, HEAD';
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Whether a browser page at `origin` may call this node. */
export function originAllowed(origin: string, selfOrigin: string | undefined, allowList: readonly string[]): boolean {
  if (selfOrigin !== undefined && origin.toLowerCase() === selfOrigin.toLowerCase()) return true;
  if (allowList.includes('*')) return true;
  if (allowList.length > 0) return allowList.some((o) => o.replace(/\/+$/, '').toLowerCase() === origin.toLowerCase());
  try {
    const u = new URL(origin);
    return (u.protocol === 'http:' || u.protocol === 'https:') && LOOPBACK_HOSTS.has(u.hostname) && u.origin === origin.toLowerCase();
  } catch {
    return false;
  }
}

/** The origin a browser on this node's own pages sends (scheme and Host as the request names them). */
function selfOriginOf(request: FastifyRequest): string | undefined {
  return request.host ? `${request.protocol}://${request.host}` : undefined;
}

export function registerCors(app: FastifyInstance, allowList: readonly string[]): void {
  const allowed = (request: FastifyRequest): string | undefined => {
    const origin = request.headers.origin;
    if (!origin) return undefined;
    return originAllowed(origin, selfOriginOf(request), allowList) ? origin : undefined;
  };

  // callback-style: it runs on every answer (issue #14)
  app.addHook('onSend', (request, reply, payload, done) => {
    const origin = allowed(request);
    if (origin) {
      reply.header('access-control-allow-origin', origin);
      reply.header('vary', 'Origin');
    }
    if (!reply.hasHeader('access-control-expose-headers')) reply.header('access-control-expose-headers', EXPOSED_HEADERS);
    done(null, payload);
  });

  // Preflights never reach the guard or the routes. A refused origin gets no allow headers, so the
  // browser stops there.
  app.route({
    method: 'OPTIONS',
    url: '*',
    config: {},
    handler: async (request, reply) => {
      if (allowed(request) || !request.headers.origin) {
        reply.header('access-control-allow-methods', ALLOWED_METHODS);
        reply.header('access-control-allow-headers', request.headers['access-control-request-headers'] ?? '*');
        reply.header('access-control-max-age', '600');
        if (request.headers.origin && request.headers['access-control-request-private-network'] === 'true') {
          reply.header('access-control-allow-private-network', 'true');
        }
      }
      return reply.code(204).send();
    },
  });
}
