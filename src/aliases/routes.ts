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
import { badRequest } from '../errors.ts';
import { DataNull, Errors } from '../http/response-schemas.ts';
import { CreateAliasRequest, ListAliasesResponse, LookupAliasResponse, ScopeNameParams, ScopeParams } from './schemas.ts';
import { parseScope, VALUE_FIELD, type AliasService } from './service.ts';
import type { AliasScope } from './store.ts';

/**
 * The create form of `scope`. One route serves every scope, so the scope is checked first (an
 * unknown one is a 404 before the body is looked at) and then the form of that scope, with the
 * validator's wording: a missing `contextId` is a 400 naming `body.contextId`.
 */
function createForm(scope: AliasScope, body: unknown): { alias: string; value: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('Invalid request: body must be object');
  const form = body as Record<string, unknown>;
  const fields = ['alias', VALUE_FIELD[scope]];
  for (const f of fields) if (form[f] === undefined) throw badRequest(`Invalid request: body.${f} is required`);
  for (const f of fields) if (typeof form[f] !== 'string') throw badRequest(`Invalid request: body.${f} must be string`);
  return { alias: form.alias as string, value: form[VALUE_FIELD[scope]] as string };
}

export function registerAliasRoutes(root: FastifyInstance, deps: { aliases: AliasService }): void {
  const service = deps.aliases;
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  const createSchema = {
    summary: 'Create an alias for a context, application or device id (409 when it exists)',
    params: ScopeParams,
    response: { 200: DataNull, ...Errors(400, 401, 403, 404, 409) },
  };
  // The body is checked by `createForm` for the scope in the path (documented, not validated, here).
  app.post('/admin-api/alias/create/:scope', { schema: createSchema, config: { docs: { body: CreateAliasRequest } } }, async (req) => {
    const scope = parseScope(req.params.scope);
    const { alias, value } = createForm(scope, req.body);
    await service.create(scope, alias, value);
    return { data: null };
  });

  const listSchema = {
    summary: 'Every alias of a scope, as {alias: id}',
    params: ScopeParams,
    response: { 200: ListAliasesResponse, ...Errors(401, 403, 404) },
  };
  app.get('/admin-api/alias/list/:scope', { schema: listSchema }, async (req) => {
    return { data: await service.list(parseScope(req.params.scope)) };
  });

  // Lookup and delete ignore their request body, as the reference does: the official SDK sends
  // `{}`, other clients send nothing or an empty JSON body. In this encapsulated context every
  // body of any content type is read (within the body limit) and dropped, so none of those is a 4xx.
  root.register(async (scoped) => {
    scoped.removeAllContentTypeParsers();
    scoped.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, _body, done) => done(null, undefined));
    const sub = scoped.withTypeProvider<TypeBoxTypeProvider>();

    const lookupSchema = {
      summary: 'The id an alias names (null when there is no such alias)',
      params: ScopeNameParams,
      response: { 200: LookupAliasResponse, ...Errors(400, 401, 403, 404) },
    };
    sub.post('/admin-api/alias/lookup/:scope/:name', { schema: lookupSchema }, async (req) => {
      const value = await service.lookup(parseScope(req.params.scope), req.params.name);
      return { data: { value } };
    });

    const deleteSchema = {
      summary: 'Delete an alias (deleting an absent one succeeds too)',
      params: ScopeNameParams,
      response: { 200: DataNull, ...Errors(400, 401, 403, 404) },
    };
    sub.post('/admin-api/alias/delete/:scope/:name', { schema: deleteSchema }, async (req) => {
      await service.delete(parseScope(req.params.scope), req.params.name);
      return { data: null };
    });
  });
}
