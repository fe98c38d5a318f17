/**
 * HTTP routes of the contexts (admin spec "Contexts"; admin-wire-a §4.2, §4.9; delegated
 * execution: only `GET /contexts/{id}/intents`). Parse, call the service, shape the envelope.
 * The guard has already checked the route's permission and a bound client key's target.
 *
 * Shapes: most answers are `{"data": …}`; `with-executors` and `resync` are flat as the reference;
 * the spec's "none" (leave, application, sync) is an empty 200. Bodies the reference ignores (join,
 * leave, delete, sync, identity/context) may be absent, empty, or of any content type. JSON bodies
 * are read with the u64-exact reader so `argsJson` reaches the guest unchanged.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { parseJson } from '../client/json.ts';
import { requireId } from '../crypto/ids.ts';
import { badRequest } from '../errors.ts';
import type { ContextCalls } from './calls.ts';
import { ApplicationParams, ContextParams, CreateContextRequest, ListQuery, QueryContextRequest, UpdateApplicationRequest } from './schemas.ts';
import type { ContextService } from './service.ts';
import { MAX_ARGS_BYTES } from './types.ts';

export interface ContextRoutesDeps {
  contexts: ContextService;
  calls: ContextCalls;
}

/** A maximal `initializationParams` (1 MiB as JSON numbers) or `argsJson` fits. */
const LARGE_BODY = MAX_ARGS_BYTES + 64 * 1024;

const none = (reply: FastifyReply) => reply.code(200).send();
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
    scope.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: LARGE_BODY }, (_req, body, done) => {
      const text = body as string;
      if (text.trim() === '') return done(null, undefined);
      try {
        done(null, parseJson(text));
      } catch (err) {
        done(badRequest(`Invalid JSON: ${(err as Error).message}`), undefined);
      }
    });
    // other content types carry nothing the routes read; schema'd bodies then fail validation (400)
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, _body, done) => done(null, undefined));
    routes(scope, deps);
  });
}

function routes(root: FastifyInstance, { contexts, calls }: ContextRoutesDeps): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/admin-api/contexts', { bodyLimit: LARGE_BODY, schema: { body: CreateContextRequest } }, async (req) => {
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

  app.get('/admin-api/contexts', { schema: { querystring: ListQuery } }, async (req) => {
    const { offset, limit } = window(req.query);
    const all = await contexts.list();
    return { data: { contexts: all.slice(offset, limit === undefined ? undefined : offset + limit) } };
  });

  app.get('/admin-api/contexts/for-application/:applicationId', { schema: { params: ApplicationParams } }, async (req) => ({
    data: { contexts: await contexts.forApplication(applicationIdOf(req.params)) },
  }));

  app.get('/admin-api/contexts/with-executors/for-application/:applicationId', { schema: { params: ApplicationParams } }, async (req) => ({
    contexts: await contexts.withExecutors(applicationIdOf(req.params)),
  }));

  const sync = async (contextId: string | undefined, reply: FastifyReply) => {
    await contexts.sync(contextId);
    return none(reply);
  };
  app.post('/admin-api/contexts/sync', async (_req, reply) => sync(undefined, reply));
  app.post('/admin-api/contexts/sync/:contextId', { schema: { params: ContextParams } }, async (req, reply) => sync(contextIdOf(req.params), reply));

  app.get('/admin-api/contexts/:contextId', { schema: { params: ContextParams } }, async (req) => ({
    data: await contexts.get(contextIdOf(req.params)),
  }));

  app.delete('/admin-api/contexts/:contextId', { schema: { params: ContextParams } }, async (req) => ({
    data: { isDeleted: await contexts.delete(contextIdOf(req.params)) },
  }));

  app.get('/admin-api/contexts/:contextId/group', { schema: { params: ContextParams } }, async (req) => ({
    data: await contexts.groupOf(contextIdOf(req.params)),
  }));

  app.get('/admin-api/contexts/:contextId/storage', { schema: { params: ContextParams } }, async (req) => ({
    data: { sizeInBytes: await contexts.storageSize(contextIdOf(req.params)) },
  }));

  app.get('/admin-api/contexts/:contextId/identities', { schema: { params: ContextParams } }, async (req) => ({
    data: { identities: await contexts.identities(contextIdOf(req.params), false), identitiesOf: 'members' },
  }));

  // Every session on this node speaks for the node (docs/contexts.md): the node's own identities.
  app.get('/admin-api/contexts/:contextId/identities-owned', { schema: { params: ContextParams } }, async (req) => ({
    data: { identities: await contexts.identities(contextIdOf(req.params), true), identitiesOf: 'node' },
  }));

  app.post('/admin-api/contexts/:contextId/join', { schema: { params: ContextParams } }, async (req) => ({
    data: await contexts.join(contextIdOf(req.params)),
  }));

  app.post('/admin-api/contexts/:contextId/leave', { schema: { params: ContextParams } }, async (req, reply) => {
    await contexts.leave(contextIdOf(req.params));
    return none(reply);
  });

  app.post('/admin-api/contexts/:contextId/application', { schema: { params: ContextParams, body: UpdateApplicationRequest } }, async (req, reply) => {
    await contexts.updateApplication(contextIdOf(req.params), requireId(req.body.applicationId, 'applicationId'));
    return none(reply);
  });

  app.post('/admin-api/contexts/:contextId/resync', { schema: { params: ContextParams } }, async (req) => {
    const body = req.body as { force?: unknown } | undefined;
    if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) throw badRequest('Invalid request: body must be an object');
    if (body?.force !== undefined && typeof body.force !== 'boolean') throw badRequest('Invalid request: body.force must be a boolean');
    return contexts.resync(contextIdOf(req.params));
  });

  app.get('/admin-api/contexts/:contextId/intents', { schema: { params: ContextParams } }, async (req) => ({
    data: await contexts.intents(contextIdOf(req.params)),
  }));

  app.post('/admin-api/contexts/:contextId/query', { bodyLimit: LARGE_BODY, schema: { params: ContextParams, body: QueryContextRequest } }, async (req) => ({
    data: await calls.query(contextIdOf(req.params), req.body.method, req.body.argsJson),
  }));

  app.post('/admin-api/identity/context', async () => ({ data: await contexts.newIdentity() }));
}
