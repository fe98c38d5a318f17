import Fastify from 'fastify';
import { Type } from 'typebox';
import { expect, it } from 'vitest';
import { openApiPath, RouteCatalogue } from './openapi.ts';
import { Data, Errors, Text } from './response-schemas.ts';

it('turns registered routes into OpenAPI operations: parameters, bodies, responses, security', async () => {
  const app = Fastify();
  const catalogue = new RouteCatalogue();
  // the node sets this from the guard's route table (auth/route-permissions.test.ts tests that table)
  catalogue.needsToken = (_method, url) => url !== '/admin-api/health';
  catalogue.attach(app);
  const Params = Type.Object({ contextId: Type.String({ description: 'the context' }) });
  app.post(
    '/admin-api/contexts/:contextId/query',
    { schema: { summary: 'Query', params: Params, body: Type.Object({ q: Type.String() }), response: { 200: Data(Type.Object({ n: Type.Integer() })), ...Errors(404) } } },
    async () => ({ data: { n: 1 } }),
  );
  app.post('/jsonrpc', { config: { docs: { body: Type.Object({ jsonrpc: Type.Literal('2.0') }) } }, schema: { response: { 200: Type.Object({}) } } }, async () => ({}));
  app.get('/admin-api/health', { schema: { response: { 200: Data(Type.Object({ status: Type.String() })) } } }, async () => ({ data: { status: 'alive' } }));
  app.get('/sse', { schema: { response: { 200: Text('text/event-stream', 'events') } } }, async () => '');
  await app.ready();

  expect(catalogue.routes.map((r) => `${r.method} ${r.url}`)).toEqual([
    'POST /admin-api/contexts/:contextId/query',
    'POST /jsonrpc',
    'GET /admin-api/health',
    'GET /sse',
  ]); // HEAD twins are left out
  const doc = catalogue.document() as any;
  const query = doc.paths['/admin-api/contexts/{contextId}/query'].post;
  expect(query.summary).toBe('Query');
  expect(query.parameters).toEqual([{ name: 'contextId', in: 'path', required: true, schema: Params.properties.contextId, description: 'the context' }]);
  expect(query.requestBody.content['application/json'].schema.properties.q.type).toBe('string');
  expect(Object.keys(query.responses)).toEqual(['200', '404']);
  expect(query.responses['404'].content['application/json'].schema.properties.error.type).toBe('string');
  expect(query.security).toEqual([{ bearer: [] }]);
  expect(doc.paths['/jsonrpc'].post.requestBody.content['application/json'].schema.properties.jsonrpc.const).toBe('2.0');
  expect(doc.paths['/admin-api/health'].get.security).toBeUndefined();
  expect(doc.paths['/sse'].get.responses['200'].content['text/event-stream'].schema.type).toBe('string');
  expect(doc.paths['/sse'].get.security).toEqual([{ bearer: [] }]);
  await app.close();
});

it('documents an explicit HEAD route, leaves out HEAD twins, and passes response headers through', async () => {
  const app = Fastify();
  const catalogue = new RouteCatalogue();
  catalogue.attach(app);
  const headers = { 'X-Blob-ID': { description: 'the id', schema: { type: 'string' } } };
  const bytes = { description: 'headers only', content: { '*/*': { schema: Type.String({ maxLength: 0 }) } }, headers };
  app.register(async (scope) => {
    scope.head('/admin-api/blobs/:id', { schema: { response: { 200: bytes } } }, async () => '');
    scope.get('/admin-api/blobs/:id', { exposeHeadRoute: false }, async () => 'bytes');
    scope.get('/admin-api/blobs', async () => ({ data: [] }));
  });
  await app.ready();

  expect(catalogue.routes.map((r) => `${r.method} ${r.url}`)).toEqual([
    'HEAD /admin-api/blobs/:id',
    'GET /admin-api/blobs/:id',
    'GET /admin-api/blobs',
  ]); // the twin HEAD /admin-api/blobs shares its GET's handler and is left out
  const doc = catalogue.document() as any;
  expect(doc.paths['/admin-api/blobs/{id}'].head.operationId).toBe('headAdminApiBlobsId');
  expect(doc.paths['/admin-api/blobs/{id}'].head.responses['200'].headers).toEqual(headers);
  expect(doc.paths['/admin-api/blobs'].head).toBeUndefined();
  await app.close();
});

it('writes fastify path templates in OpenAPI form', () => {
  expect(openApiPath('/admin/keys/:key_id/clients/:client_id')).toBe('/admin/keys/{key_id}/clients/{client_id}');
  expect(openApiPath('/static/*')).toBe('/static/{wildcard}');
});

it('publishes success schemas closed (maps and key-less objects stay open) without touching the route schemas', async () => {
  const app = Fastify();
  const catalogue = new RouteCatalogue();
  catalogue.attach(app);
  const Row = Type.Object({ id: Type.String(), labels: Type.Record(Type.String(), Type.String()), abi: Type.Object({}) });
  const answer = Data(Type.Object({ rows: Type.Array(Row), one: Type.Union([Row, Type.Null()]) }));
  app.get('/admin-api/rows', { schema: { response: { 200: answer, ...Errors(404) } } }, async () => ({ data: { rows: [], one: null } }));
  await app.ready();

  const ok = (catalogue.document() as any).paths['/admin-api/rows'].get.responses;
  const schema = ok['200'].content['application/json'].schema;
  expect(schema.additionalProperties).toBe(false);
  expect(schema.properties.data.additionalProperties).toBe(false);
  const row = schema.properties.data.properties.rows.items;
  expect(row.additionalProperties).toBe(false);
  expect(schema.properties.data.properties.one.anyOf[0].additionalProperties).toBe(false);
  expect(row.properties.labels.additionalProperties ?? row.properties.labels.patternProperties).toBeDefined();
  expect(row.properties.labels.additionalProperties).not.toBe(false);
  expect(row.properties.abi.additionalProperties).toBeUndefined(); // lists no keys: promises none
  expect(ok['404'].content['application/json'].schema.additionalProperties).toBeUndefined(); // errors as declared
  expect((Row as any).additionalProperties).toBeUndefined(); // the route's own schema is not changed
  await app.close();
});
