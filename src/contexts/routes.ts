/**
 * HTTP routes of the contexts (admin spec "Contexts"; admin-wire-a §4.2, §4.9; delegated
 * execution: only `GET /contexts/{id}/intents`). Parse, call the service, shape the envelope.
 * The guard has already checked the route's permission and a bound client key's target.
 *
 * Shapes: most answers are `{"data": …}`; `with-executors` and `resync` are flat as the reference;
 * hearth's sync status has routes of its own (`GET /contexts/sync`, `GET /contexts/{id}/sync`) so
 * the spec's Context stays exactly as shaped;
 * the spec's "none" (leave, application, sync) is an empty 200. Bodies the reference ignores (join,
 * leave, delete, sync, identity/context) may be absent, empty, or of any content type. JSON bodies
 * are read with the u64-exact reader so `argsJson` reaches the guest unchanged.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { exactJsonBodies } from '../http/body.ts';
import { requireId } from '../crypto/ids.ts';
import { badRequest } from '../errors.ts';
import { countLargeBodies, type BodyAdmission } from './body-admission.ts';
import type { ContextCalls } from './calls.ts';
import type { RawStateReader } from './raw-state.ts';
import { registerRawStateRoutes } from './raw-state-routes.ts';
import { Empty, Errors } from '../http/response-schemas.ts';
import {
  ApplicationParams,
  ContextAnswer,
  ContextListAnswer,
  ContextParams,
  CreateContextRequest,
  CreatedContext,
  DeletedAnswer,
  GroupAnswer,
  IdentitiesAnswer,
  IntentsAnswer,
  JoinedAnswer,
  ListQuery,
  NewIdentityAnswer,
  QueryAnswer,
  QueryContextRequest,
  ResyncAnswer,
  ResyncRequest,
  StorageAnswer,
  SyncStatusAnswer,
  SyncStatusListAnswer,
  UpdateApplicationRequest,
  WithExecutorsAnswer,
} from './schemas.ts';
import type { ContextService } from './service.ts';
import { MAX_ARGS_BYTES } from './types.ts';
import { emptyOk } from '../http/reply.ts';

export interface ContextRoutesDeps {
  contexts: ContextService;
  calls: ContextCalls;
  /** the pending-call bounds: a query's large body is counted before it is read (issue #23 §4) */
  admission?: BodyAdmission;
  /** hearth's raw state rows (raw-state-routes.ts); the routes are not registered without it */
  rawState?: RawStateReader;
}

/** A maximal `initializationParams` (1 MiB as JSON numbers) or `argsJson` fits. */
const LARGE_BODY = MAX_ARGS_BYTES + 64 * 1024;

/** The spec's "none": 200 with an empty body. */
const NONE = Empty('No payload (the spec’s "none"): an empty body');
/** Guarded: a missing or bad token (401), a token without the permission (403). */
const AUTH = [401, 403];
const contextIdOf = (p: { contextId: string }) => requireId(p.contextId, 'context id');
const applicationIdOf = (p: { applicationId: string }) => requireId(p.applicationId, 'application id');

function window(query: { offset?: string; limit?: string }): { offset: number; limit: number | undefined } {
  const num = (v: string | undefined, name: string) => {
    if (v === undefined) return undefined;
    if (!/^\d{1,9}$/.test(v)) throw badRequest(`Invalid ${name}: expected a non-negative integer`);
    return Number(v);
  };
  return { offset: num(query.offset, 'offset') ?? 0, limit: num(query.limit, 'limit') };
}

export function registerContextRoutes(root: FastifyInstance, deps: ContextRoutesDeps): void {
  void root.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    exactJsonBodies(scope, { bodyLimit: LARGE_BODY, emptyAsNoBody: true });
    // other content types carry nothing the routes read; schema'd bodies then fail validation (400)
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, _body, done) => done(null, undefined));
    routes(scope, deps);
  });
}

/** Route documentation (issue #6 OpenAPI): summaries, request schemas fastify validates, and answers. */
const byContext = { params: ContextParams };
const DOCS = {
  create: {
    summary: 'Create a context in a group (runs the application’s init)',
    body: CreateContextRequest,
    response: { 200: CreatedContext, ...Errors(400, ...AUTH, 404, 409) },
  },
  list: { summary: 'Contexts this node holds', querystring: ListQuery, response: { 200: ContextListAnswer, ...Errors(400, ...AUTH) } },
  forApplication: { summary: 'Contexts of one application', params: ApplicationParams, response: { 200: ContextListAnswer, ...Errors(400, ...AUTH) } },
  withExecutors: {
    summary: 'Contexts of one application with their executors (flat)',
    params: ApplicationParams,
    response: { 200: WithExecutorsAnswer, ...Errors(400, ...AUTH) },
  },
  syncAll: { summary: 'Sync every context (progress as SyncStatus events)', response: { 200: NONE, ...Errors(...AUTH) } },
  syncOne: { summary: 'Sync one context (progress as SyncStatus events)', ...byContext, response: { 200: NONE, ...Errors(400, ...AUTH, 404) } },
  syncStatuses: {
    summary: "hearth: the sync status of every context this node holds (503 on a node without a network)",
    response: { 200: SyncStatusListAnswer, ...Errors(...AUTH, 503) },
  },
  syncStatus: {
    summary: 'hearth: the sync status of one context on this node (503 on a node without a network)',
    ...byContext,
    response: { 200: SyncStatusAnswer, ...Errors(400, ...AUTH, 404, 503) },
  },
  get: { summary: 'One context', ...byContext, response: { 200: ContextAnswer, ...Errors(400, ...AUTH, 404) } },
  delete: { summary: 'Delete a context', ...byContext, response: { 200: DeletedAnswer, ...Errors(400, ...AUTH) } },
  group: { summary: 'The group owning a context, or null', ...byContext, response: { 200: GroupAnswer, ...Errors(400, ...AUTH) } },
  storage: { summary: 'Bytes of state a context holds', ...byContext, response: { 200: StorageAnswer, ...Errors(400, ...AUTH) } },
  identities: { summary: 'Member identities of a context', ...byContext, response: { 200: IdentitiesAnswer, ...Errors(400, ...AUTH, 404) } },
  identitiesOwned: { summary: 'Identities this node holds the keys of', ...byContext, response: { 200: IdentitiesAnswer, ...Errors(400, ...AUTH, 404) } },
  join: { summary: 'Join a context of a group this node belongs to', ...byContext, response: { 200: JoinedAnswer, ...Errors(400, ...AUTH, 404) } },
  leave: { summary: 'Leave a context', ...byContext, response: { 200: NONE, ...Errors(400, ...AUTH, 404) } },
  application: {
    summary: 'Move a context to another application',
    ...byContext,
    body: UpdateApplicationRequest,
    response: { 200: NONE, ...Errors(400, ...AUTH, 404) },
  },
  resync: { summary: 'Re-pull a context from peers (flat answer)', ...byContext, response: { 200: ResyncAnswer, ...Errors(400, ...AUTH, 404) } },
  intents: { summary: 'What a delegated-execution warrant for this node must name', ...byContext, response: { 200: IntentsAnswer, ...Errors(400, ...AUTH, 404) } },
  query: {
    summary: 'Call a read-only method (400 with type FunctionCallError when it fails)',
    ...byContext,
    body: QueryContextRequest,
    response: { 200: QueryAnswer, ...Errors(400, ...AUTH, 404, 409) },
  },
  newIdentity: { summary: 'A fresh identity the node holds the key of', response: { 200: NewIdentityAnswer, ...Errors(...AUTH) } },
};

function routes(root: FastifyInstance, { contexts, calls, admission, rawState }: ContextRoutesDeps): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  if (rawState) registerRawStateRoutes(app, rawState);

  app.post('/admin-api/contexts', { bodyLimit: LARGE_BODY, schema: DOCS.create }, async (req) => {
    const b = req.body;
    return {
      data: await contexts.create({
        groupId: requireId(b.groupId, 'groupId'),
        applicationId: b.applicationId === undefined ? undefined : requireId(b.applicationId, 'applicationId'),
        initializationParams: Uint8Array.from(b.initializationParams ?? []),
        contextSeed: b.contextSeed,
        identitySecret: b.identitySecret,
        serviceName: b.serviceName,
        name: b.name,
      }),
    };
  });

  app.get('/admin-api/contexts', { schema: DOCS.list }, async (req) => {
    const { offset, limit } = window(req.query);
    const all = await contexts.list();
    return { data: { contexts: all.slice(offset, limit === undefined ? undefined : offset + limit) } };
  });

  app.get('/admin-api/contexts/for-application/:applicationId', { schema: DOCS.forApplication }, async (req) => ({
    data: { contexts: await contexts.forApplication(applicationIdOf(req.params)) },
  }));

  app.get('/admin-api/contexts/with-executors/for-application/:applicationId', { schema: DOCS.withExecutors }, async (req) => ({
    contexts: await contexts.withExecutors(applicationIdOf(req.params)),
  }));

  const sync = async (contextId: string | undefined, reply: FastifyReply) => {
    await contexts.sync(contextId);
    return emptyOk(reply);
  };
  app.post('/admin-api/contexts/sync', { schema: DOCS.syncAll }, async (_req, reply) => sync(undefined, reply));
  app.post('/admin-api/contexts/sync/:contextId', { schema: DOCS.syncOne }, async (req, reply) => sync(contextIdOf(req.params), reply));

  // hearth's own routes (docs/sync.md): the spec-shaped Context carries no sync status
  app.get('/admin-api/contexts/sync', { schema: DOCS.syncStatuses }, async () => ({ data: { contexts: await contexts.syncStatuses() } }));
  app.get('/admin-api/contexts/:contextId/sync', { schema: DOCS.syncStatus }, async (req) => ({
    data: await contexts.syncStatus(contextIdOf(req.params)),
  }));

  app.get('/admin-api/contexts/:contextId', { schema: DOCS.get }, async (req) => ({
    data: await contexts.get(contextIdOf(req.params)),
  }));

  app.delete('/admin-api/contexts/:contextId', { schema: DOCS.delete }, async (req) => ({
    data: { isDeleted: await contexts.delete(contextIdOf(req.params)) },
  }));

  app.get('/admin-api/contexts/:contextId/group', { schema: DOCS.group }, async (req) => ({
    data: await contexts.groupOf(contextIdOf(req.params)),
  }));

  app.get('/admin-api/contexts/:contextId/storage', { schema: DOCS.storage }, async (req) => ({
    data: { sizeInBytes: await contexts.storageSize(contextIdOf(req.params)) },
  }));

  app.get('/admin-api/contexts/:contextId/identities', { schema: DOCS.identities }, async (req) => ({
    data: { identities: await contexts.identities(contextIdOf(req.params), false), identitiesOf: 'members' as const },
  }));

  // Every session on this node speaks for the node (docs/contexts.md): the node's own identities.
  app.get('/admin-api/contexts/:contextId/identities-owned', { schema: DOCS.identitiesOwned }, async (req) => ({
    data: { identities: await contexts.identities(contextIdOf(req.params), true), identitiesOf: 'node' as const },
  }));

  app.post('/admin-api/contexts/:contextId/join', { schema: DOCS.join }, async (req) => ({
    data: await contexts.join(contextIdOf(req.params)),
  }));

  app.post('/admin-api/contexts/:contextId/leave', { schema: DOCS.leave }, async (req, reply) => {
    await contexts.leave(contextIdOf(req.params));
    return emptyOk(reply);
  });

  app.post('/admin-api/contexts/:contextId/application', { schema: DOCS.application }, async (req, reply) => {
    await contexts.updateApplication(contextIdOf(req.params), requireId(req.body.applicationId, 'applicationId'));
    return emptyOk(reply);
  });

  // The body is optional and read by hand: documented (config.docs), not validated.
  app.post('/admin-api/contexts/:contextId/resync', { config: { docs: { body: ResyncRequest } }, schema: DOCS.resync }, async (req) => {
    const body = req.body as { force?: unknown } | undefined;
    if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) throw badRequest('Invalid request: body must be an object');
    if (body?.force !== undefined && typeof body.force !== 'boolean') throw badRequest('Invalid request: body.force must be a boolean');
    return contexts.resync(contextIdOf(req.params));
  });

  app.get('/admin-api/contexts/:contextId/intents', { schema: DOCS.intents }, async (req) => ({
    data: await contexts.intents(contextIdOf(req.params)),
  }));

  const countBodies = admission ? { onRequest: countLargeBodies(admission) } : {};
  app.post('/admin-api/contexts/:contextId/query', { bodyLimit: LARGE_BODY, schema: DOCS.query, ...countBodies }, async (req) => ({
    data: await calls.query(contextIdOf(req.params), req.body.method, req.body.argsJson),
  }));

  app.post('/admin-api/identity/context', { schema: DOCS.newIdentity }, async () => ({ data: await contexts.newIdentity() }));
}
