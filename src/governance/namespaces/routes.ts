/** Namespace routes (admin spec "Namespaces" table): parse, call, shape the envelope. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requireId } from '../../crypto/ids.ts';
import { namespaceView } from '../views.ts';
import type { GovernanceRouteDeps } from '../routes.ts';
import { CreateNamespaceRequest, NamespaceParams } from './schemas.ts';

export function registerNamespaceRoutes(root: FastifyInstance, deps: GovernanceRouteDeps): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const { namespaces } = deps;

  app.post('/admin-api/namespaces', { schema: { body: CreateNamespaceRequest } }, async (req) => {
    const b = req.body;
    const appKey = b.appKey ?? b.bytecodeId;
    const ns = await namespaces.found({
      applicationId: requireId(b.applicationId, 'applicationId'),
      appKey: appKey === undefined ? undefined : requireId(appKey, 'appKey'),
      name: b.name ?? b.alias,
    });
    return { data: { namespaceId: ns.id, founding: ns.founding } };
  });

  app.get('/admin-api/namespaces', async () => ({ data: namespaces.list().map(namespaceView) }));

  app.get('/admin-api/namespaces/:namespaceId', { schema: { params: NamespaceParams } }, async (req) => {
    const id = requireId(req.params.namespaceId, 'namespace id');
    return { data: namespaceView(namespaces.get(id)) };
  });
}
