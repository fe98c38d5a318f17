/**
 * Public probes of the admin surface (admin spec "Health and status"; admin-wire-a §2): liveness
 * and readiness both answer whether the store reads and writes (a store that reads but cannot
 * write is not alive, issue #17 finding 1) and 503 with the reason when it does not; readiness
 * also follows the node's lifecycle. They answer from memory (`Store.status`: the store monitor's
 * last read-write probe, and any failed operation at once), so a probe costs no store access
 * (issue #14). `is-authed` always answers alive.
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

/** The reference's `{data: {status}}`, exactly (a success answer carries nothing else). */
const Status = (values: string) => Data(Type.Object({ status: Type.String({ description: values }) }));
/** The 503 answer: the status, and (hearth) why the store is unavailable, for the operator. */
const Unavailable = (values: string) =>
  Data(Type.Object({ status: Type.String({ description: values }), reason: Type.Optional(Type.String({ description: 'why the store is unavailable' })) }));
const probe = (summary: string, ok: string, unavailable?: string) => ({
  schema: { summary, response: { 200: Status(ok), ...(unavailable ? { 503: Unavailable(unavailable) } : {}) } },
});

export function registerHealthRoutes(app: FastifyInstance, deps: HealthDeps): void {
  /** The 503 body when the store cannot read and write, else undefined. */
  const storeDown = () => {
    const health = deps.store.status();
    return health.ok ? undefined : { data: { status: 'store_unavailable', reason: health.reason } };
  };

  app.get('/admin-api/health', probe('Liveness: the store reads and writes', '"alive"', '"store_unavailable" (with `reason`)'), async (_req, reply) => {
    const down = storeDown();
    return down ? reply.code(503).send(down) : { data: { status: 'alive' } };
  });

  app.get(
    '/admin-api/ready',
    probe('Readiness: started and the store reads and writes', '"ready"', '"starting" | "shutting_down" | "store_unavailable" (with `reason`)'),
    async (_req, reply) => {
      const state = deps.lifecycle();
      if (state !== 'ready') return reply.code(503).send({ data: { status: state } });
      const down = storeDown();
      return down ? reply.code(503).send(down) : { data: { status: 'ready' } };
    },
  );

  app.get('/admin-api/is-authed', probe('Always alive (kept for the official clients)', '"alive"'), async () => ({
    data: { status: 'alive' },
  }));

  const Peers = Type.Object({ count: Type.Integer({ minimum: 0, description: 'connected peers' }) });
  // synchronous: fastify sends a plain return value without a promise (issue #14)
  app.get('/admin-api/peers', { schema: { summary: 'Connected peer count (flat)', response: { 200: Peers, ...Errors(401, 403) } } }, () => ({
    count: deps.peerCount(),
  }));
}
