/** Namespace routes (admin spec "Namespaces" table): parse, call, shape the envelope. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requireId } from '../../crypto/ids.ts';
import { namespaceView } from '../views.ts';
import type { GovernanceRouteDeps } from '../route-deps.ts';
import { Errors } from '../../http/response-schemas.ts';
import { CreateNamespaceRequest, NamespaceParams } from './schemas.ts';
import { CreateNamespaceAnswer, NamespaceAnswer, NamespaceListAnswer } from './response-schemas.ts';

export function registerNamespaceRoutes(root: FastifyInstance, deps: GovernanceRouteDeps): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const { namespaces } = deps;

  const create = {
    summary: 'Founds a namespace: this node\'s account becomes its admin and owner',
    body: CreateNamespaceRequest,
    response: { 200: CreateNamespaceAnswer, ...Errors(400, 401, 403) },
  };
  app.post('/admin-api/namespaces', { schema: create }, async (req) => {
    const b = req.body;
    const appKey = b.appKey ?? b.bytecodeId;
    const ns = await namespaces.found({
      applicationId: requireId(b.applicationId, 'applicationId'),
      appKey: appKey === undefined ? undefined : requireId(appKey, 'appKey'),
      name: b.name ?? b.alias,
    });
    return { data: { namespaceId: ns.id, founding: ns.founding } };
  });

  const list = { summary: 'The namespaces in the session\'s scope', response: { 200: NamespaceListAnswer, ...Errors(401, 403) } };
  app.get('/admin-api/namespaces', { schema: list }, async () => ({ data: namespaces.list().map(namespaceView) }));

  const get = { summary: 'One namespace', params: NamespaceParams, response: { 200: NamespaceAnswer, ...Errors(400, 401, 403, 404) } };
  app.get('/admin-api/namespaces/:namespaceId', { schema: get }, async (req) => {
    const id = requireId(req.params.namespaceId, 'namespace id');
    return { data: namespaceView(namespaces.get(id)) };
  });
}
