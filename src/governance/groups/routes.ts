/** Group routes (admin spec "Groups" table): parse, call, shape the envelope. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requireId } from '../../crypto/ids.ts';
import { badRequest } from '../../errors.ts';
import type { GovernanceRouteDeps } from '../routes.ts';
import { groupInfoView } from '../views.ts';
import { CreateGroupRequest, GroupParams } from './schemas.ts';

export function registerGroupRoutes(root: FastifyInstance, deps: GovernanceRouteDeps): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const { groups } = deps;

  app.post('/admin-api/groups', { schema: { body: CreateGroupRequest } }, async (req) => {
    const b = req.body as typeof req.body & { groupId?: unknown };
    if (b.groupId !== undefined) throw badRequest('groupId is not accepted: group ids are derived by the node');
    const appKey = b.appKey ?? b.bytecodeId;
    const groupId = await groups.create({
      applicationId: requireId(b.applicationId, 'applicationId'),
      appKey: appKey === undefined ? undefined : requireId(appKey, 'appKey'),
      name: b.name,
      parentGroupId: b.parentGroupId === undefined ? undefined : requireId(b.parentGroupId, 'parentGroupId'),
      visibility: b.visibility,
    });
    return { data: { groupId } };
  });

  app.get('/admin-api/groups/:groupId', { schema: { params: GroupParams } }, async (req) => {
    const { ns, group } = groups.get(requireId(req.params.groupId, 'group id'));
    return { data: groupInfoView(ns, group) };
  });
}
