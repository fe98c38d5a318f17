/**
 * Public probes of the admin surface (admin spec "Health and status"; admin-wire-a §2): liveness
 * pings the store, readiness follows the node's lifecycle, `is-authed` always answers alive.
 * `GET /admin-api/peers` (admin, flat `{count}`) counts connected peers.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Store } from '../store/store.ts';
import { Data, Errors } from './response-schemas.ts';

export type Lifecycle = 'starting' | 'ready' | 'shutting_down';

export interface HealthDeps {
  store: Store;
  lifecycle: () => Lifecycle;
  /** connected peers; the reference answers 0 on a node without a swarm */
  peerCount: () => number;
}

const Status = (values: string) => Data(Type.Object({ status: Type.String({ description: values }) }));
const probe = (summary: string, ok: string, unavailable?: string) => ({
  schema: { summary, response: { 200: Status(ok), ...(unavailable ? { 503: Status(unavailable) } : {}) } },
});

export function registerHealthRoutes(app: FastifyInstance, deps: HealthDeps): void {
  app.get('/admin-api/health', probe('Liveness: the store answers', '"alive"', '"store_unavailable"'), async (_req, reply) => {
    if (!(await deps.store.ping())) return reply.code(503).send({ data: { status: 'store_unavailable' } });
    return { data: { status: 'alive' } };
  });

  app.get(
    '/admin-api/ready',
    probe('Readiness: started and the store answers', '"ready"', '"starting" | "shutting_down" | "store_unavailable"'),
    async (_req, reply) => {
      const state = deps.lifecycle();
      if (state !== 'ready') return reply.code(503).send({ data: { status: state } });
      if (!(await deps.store.ping())) return reply.code(503).send({ data: { status: 'store_unavailable' } });
      return { data: { status: 'ready' } };
    },
  );

  app.get('/admin-api/is-authed', probe('Always alive (kept for the official clients)', '"alive"'), async () => ({
    data: { status: 'alive' },
  }));

  const Peers = Type.Object({ count: Type.Integer({ minimum: 0, description: 'connected peers' }) });
  app.get('/admin-api/peers', { schema: { summary: 'Connected peer count (flat)', response: { 200: Peers, ...Errors(401, 403) } } }, async () => ({
    count: deps.peerCount(),
  }));
}
