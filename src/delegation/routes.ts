/**
 * Delegated-execution routes (admin spec "Contexts" `POST /contexts/{contextId}/intents`,
 * "Delegated creation and governance"; admin-wire-b §8): parse, call, shape `{data: …}`. Bodies
 * are JSON read u64-exact (`argsJson`, `initArgs` reach the guest unchanged); every field is checked
 * by the services. On a node with `admin.delegated_access` these routes are public and the warrant
 * is the credential (route-permissions.ts).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { requireId } from '../crypto/ids.ts';
import { ContextParams, MAX_ARGS_BYTES } from '../contexts/index.ts';
import { badRequest } from '../errors.ts';
import { exactJsonBodies } from '../http/body.ts';
import { Errors } from '../http/response-schemas.ts';
import { GroupParams } from '../governance/index.ts';
import type { GroupIntentService } from './group-intents.ts';
import type { IntentService } from './intents.ts';
import {
  AuthorQuery,
  ContextIntentRelayAnswer,
  CreateContextIntentAnswer,
  CreateContextIntentRequest,
  GovernanceIntentAnswer,
  GovernanceIntentRelayAnswer,
  GovernanceIntentRequest,
  PerformIntentAnswer,
  PerformIntentRequest,
} from './schemas.ts';

export interface DelegationRouteDeps {
  intents: IntentService;
  groupIntents: GroupIntentService;
}

/** Room for a maximal `argsJson` and the warrant and proof beside it. */
const BODY_LIMIT = MAX_ARGS_BYTES + 256 * 1024;
const REFUSALS = Errors(400, 401, 403, 404, 409);

function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('Invalid request body: expected a JSON object');
  return body as Record<string, unknown>;
}

export function registerDelegationRoutes(root: FastifyInstance, deps: DelegationRouteDeps): void {
  void root.register(async (scope) => {
    exactJsonBodies(scope, { bodyLimit: BODY_LIMIT });
    const app = scope.withTypeProvider<TypeBoxTypeProvider>();
    const { intents, groupIntents } = deps;

    app.post(
      '/admin-api/contexts/:contextId/intents',
      {
        bodyLimit: BODY_LIMIT,
        config: { docs: { body: PerformIntentRequest } },
        schema: { summary: 'Run one method for a member under the member’s warrant', params: ContextParams, response: { 200: PerformIntentAnswer, ...REFUSALS } },
      },
      async (req) => {
        const b = objectBody(req.body);
        return { data: await intents.perform(requireId(req.params.contextId, 'context id'), { method: b.method, argsJson: b.argsJson, warrant: b.warrant, authorProof: b.authorProof }) };
      },
    );

    app.get(
      '/admin-api/groups/:groupId/context-intents',
      { schema: { summary: 'What a context-creation warrant for this node must name', params: GroupParams, querystring: AuthorQuery, response: { 200: ContextIntentRelayAnswer, ...Errors(400, 401, 403, 404) } } },
      async (req) => ({
        data: groupIntents.contextRelayInfo(requireId(req.params.groupId, 'group id'), req.query.author === undefined ? undefined : requireId(req.query.author, 'author')),
      }),
    );

    app.post(
      '/admin-api/groups/:groupId/context-intents',
      {
        config: { docs: { body: CreateContextIntentRequest } },
        schema: { summary: 'Create a context for a member under the member’s warrant', params: GroupParams, response: { 200: CreateContextIntentAnswer, ...REFUSALS } },
      },
      async (req) => {
        const b = objectBody(req.body);
        return { data: await groupIntents.createContext(requireId(req.params.groupId, 'group id'), { warrant: b.warrant, authorProof: b.authorProof, initArgs: b.initArgs }) };
      },
    );

    app.get(
      '/admin-api/groups/:groupId/governance-intents',
      { schema: { summary: 'What a governance warrant for this node must name', params: GroupParams, response: { 200: GovernanceIntentRelayAnswer, ...Errors(400, 401, 403, 404) } } },
      async (req) => ({ data: groupIntents.governanceRelayInfo(requireId(req.params.groupId, 'group id')) }),
    );

    app.post(
      '/admin-api/groups/:groupId/governance-intents',
      {
        config: { docs: { body: GovernanceIntentRequest } },
        schema: { summary: 'Publish a governance op for a member under the member’s warrant', params: GroupParams, response: { 200: GovernanceIntentAnswer, ...REFUSALS } },
      },
      async (req) => {
        const b = objectBody(req.body);
        return { data: await groupIntents.governance(requireId(req.params.groupId, 'group id'), { warrant: b.warrant, authorProof: b.authorProof, op: b.op }) };
      },
    );
  });
}
