/** Group routes (admin spec "Groups" table): parse, call, shape the envelope. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requireId } from '../../crypto/ids.ts';
import { badRequest } from '../../errors.ts';
import type { GovernanceRouteDeps } from '../route-deps.ts';
import { groupInfoView } from '../views.ts';
import { Errors } from '../../http/response-schemas.ts';
import { CreateGroupAnswer, CreateGroupRequest, groupInfoAnswer, GroupParams } from './schemas.ts';

export function registerGroupRoutes(root: FastifyInstance, deps: GovernanceRouteDeps): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const { groups } = deps;

  const createSchema = {
    summary: 'Create a group: a new namespace without parentGroupId, else a subgroup',
    body: CreateGroupRequest,
    response: { 200: CreateGroupAnswer, ...Errors(400, 401, 403, 404) },
  };
  app.post('/admin-api/groups', { schema: createSchema }, async (req) => {
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

  const infoFields = Object.entries(deps.groupInfoFields ?? {});
  const infoSchema = { summary: 'GroupInfo', params: GroupParams, response: { 200: groupInfoAnswer(deps.groupInfoFields), ...Errors(400, 401, 403, 404) } };
  app.get('/admin-api/groups/:groupId', { schema: infoSchema }, async (req) => {
    const { ns, group } = groups.get(requireId(req.params.groupId, 'group id'));
    const added: Record<string, unknown> = {};
    for (const [name, field] of infoFields) {
      const value = await field.read(group.id);
      if (value !== undefined) added[name] = value;
    }
    return { data: { ...groupInfoView(ns, group), ...added } };
  });
}
