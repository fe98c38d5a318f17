/**
 * `POST /admin-api/contexts/{contextId}/presence-intents` (admin spec Contexts table; reference
 * `presence_intent.rs`): body `PresenceIntentRequest`, answer 204 with no body. Thin: parse the
 * body (u64 exact), call `PresenceIntentService`, answer. The guard (`auth/route-permissions.ts`)
 * has already required `admin` for the path.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { exactJsonBodies } from '../http/body.ts';
import { Errors } from '../http/response-schemas.ts';
import { parsePresenceIntentRequest, type PresenceIntentService } from './presence-intents.ts';
import { ContextIdParams, PresenceIntentAccepted, PresenceIntentRequest } from './schemas.ts';

export function registerPresenceIntentRoute(root: FastifyInstance, service: PresenceIntentService): void {
  void root.register(async (scope) => {
    // `seq` and `sentAtMs` are u64: parsed exactly, never through a double.
    exactJsonBodies(scope);
    const docs = {
      config: { docs: { body: PresenceIntentRequest } },
      schema: {
        summary: 'Relay an account device’s signed presence (Ephemeral frame)',
        params: ContextIdParams,
        response: { 204: PresenceIntentAccepted, ...Errors(400, 401, 403, 404, 413) },
      },
    };
    scope.withTypeProvider<TypeBoxTypeProvider>().post('/admin-api/contexts/:contextId/presence-intents', docs, async (req, reply) => {
      service.publish(req.params.contextId, parsePresenceIntentRequest(req.body));
      return reply.code(204).send();
    });
  });
}
