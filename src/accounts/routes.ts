/** `GET /admin-api/identity` (admin spec "NodeIdentity"): the only mapping from this node to its account. */
import type { FastifyInstance } from 'fastify';
import { Errors } from '../http/response-schemas.ts';
import { IdentityAnswer } from './schemas.ts';
import type { NodeIdentity } from '../identity/identity.ts';
import type { AccountService } from './service.ts';

export function registerIdentityRoutes(app: FastifyInstance, deps: { identity: NodeIdentity; accounts?: AccountService }): void {
  const schema = { summary: 'The account this node acts as, its device and keys (NodeIdentity)', response: { 200: IdentityAnswer, ...Errors(401, 403) } };
  app.get('/admin-api/identity', { schema }, async () => {
    // `revokedFrom` is omitted until a revocation of this node's device has reached it (spec)
    const revokedFrom = deps.accounts?.revokedFrom();
    return { data: { ...deps.identity.view(), ...(revokedFrom ? { revokedFrom } : {}) } };
  });
}
