/**
 * HTTP routes of the aliases (admin spec "Aliases"; admin-wire-a §6.1): create, lookup, delete and
 * list for the scopes `context`, `application` and `device`. Parse, call, shape the envelope — the
 * rules live in `service.ts`. The node guard has already checked the caller's alias permission
 * (`auth/route-permissions.ts`) before any handler here runs.
 *
 * Wire shapes (reference): create and delete answer `{"data":null}`; lookup answers
 * `{"data":{"value": id | null}}`; list answers the flat map `{"data":{alias: id}}`, `{"data":{}}`
 * when empty (spec rule 3). Any other scope, `identity` included, is 404; deeper
 * `/alias/<verb>/identity/...` paths are not routes at all and get the router's 404.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Store } from '../store/store.ts';
import {
  CreateApplicationAliasRequest,
  CreateContextAliasRequest,
  CreateDeviceAliasRequest,
  ScopeNameParams,
  ScopeParams,
} from './schemas.ts';
import { AliasService, parseScope } from './service.ts';

export function registerAliasRoutes(root: FastifyInstance, deps: { store: Store }): void {
  const service = new AliasService(deps);
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  // One static route per scope, so each create form is validated by its own schema (a missing
  // `contextId` is a 400 naming `body.contextId`).
  app.post('/admin-api/alias/create/context', { schema: { body: CreateContextAliasRequest } }, async (req) => {
    await service.create('context', req.body.alias, req.body.contextId);
    return { data: null };
  });
  app.post('/admin-api/alias/create/application', { schema: { body: CreateApplicationAliasRequest } }, async (req) => {
    await service.create('application', req.body.alias, req.body.applicationId);
    return { data: null };
  });
  app.post('/admin-api/alias/create/device', { schema: { body: CreateDeviceAliasRequest } }, async (req) => {
    await service.create('device', req.body.alias, req.body.deviceId);
    return { data: null };
  });
  // Static routes win over this one, so it only sees unknown scopes (identity included): a 404
  // that says which scopes exist, before the body is looked at.
  app.post('/admin-api/alias/create/:scope', { schema: { params: ScopeParams } }, async (req) => {
    parseScope(req.params.scope);
    throw new Error('unreachable: known scopes have static routes');
  });

  app.get('/admin-api/alias/list/:scope', { schema: { params: ScopeParams } }, async (req) => {
    return { data: await service.list(parseScope(req.params.scope)) };
  });

  // Lookup and delete ignore their request body, as the reference does: the official SDK sends
  // `{}`, other clients send nothing or an empty JSON body. In this encapsulated context every
  // body of any content type is read (within the body limit) and dropped, so none of those is a 4xx.
  root.register(async (scoped) => {
    scoped.removeAllContentTypeParsers();
    scoped.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, _body, done) => done(null, undefined));
    const sub = scoped.withTypeProvider<TypeBoxTypeProvider>();

    sub.post('/admin-api/alias/lookup/:scope/:name', { schema: { params: ScopeNameParams } }, async (req) => {
      const value = await service.lookup(parseScope(req.params.scope), req.params.name);
      return { data: { value } };
    });

    sub.post('/admin-api/alias/delete/:scope/:name', { schema: { params: ScopeNameParams } }, async (req) => {
      await service.delete(parseScope(req.params.scope), req.params.name);
      return { data: null };
    });
  });

}
