/** `GET /admin-api/identity` (admin spec "NodeIdentity"): the only mapping from this node to its account. */
import type { FastifyInstance } from 'fastify';
import type { NodeIdentity } from './identity.ts';
import type { AccountService } from './service.ts';

export function registerIdentityRoutes(app: FastifyInstance, deps: { identity: NodeIdentity; accounts?: AccountService }): void {
  app.get('/admin-api/identity', async () => {
    // `revokedFrom` is omitted until a revocation of this node's device has reached it (spec)
    const revokedFrom = deps.accounts?.revokedFrom();
    return { data: { ...deps.identity.view(), ...(revokedFrom ? { revokedFrom } : {}) } };
  });
}
