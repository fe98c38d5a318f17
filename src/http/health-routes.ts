/**
 * Public probes of the admin surface (admin spec "Health and status"; admin-wire-a §2): liveness
 * pings the store, readiness follows the node's lifecycle, `is-authed` always answers alive.
 */
import type { FastifyInstance } from 'fastify';
import type { Store } from '../store/store.ts';

export type Lifecycle = 'starting' | 'ready' | 'shutting_down';

export function registerHealthRoutes(app: FastifyInstance, deps: { store: Store; lifecycle: () => Lifecycle }): void {
  app.get('/admin-api/health', async (_req, reply) => {
    if (!(await deps.store.ping())) return reply.code(503).send({ data: { status: 'store_unavailable' } });
    return { data: { status: 'alive' } };
  });

  app.get('/admin-api/ready', async (_req, reply) => {
    const state = deps.lifecycle();
    if (state !== 'ready') return reply.code(503).send({ data: { status: state } });
    if (!(await deps.store.ping())) return reply.code(503).send({ data: { status: 'store_unavailable' } });
    return { data: { status: 'ready' } };
  });

  app.get('/admin-api/is-authed', async () => ({ data: { status: 'alive' } }));
}
