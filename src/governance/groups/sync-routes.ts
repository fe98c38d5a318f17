/**
 * `POST /admin-api/groups/{groupId}/sync` (admin spec "Sync, upgrades and migration";
 * admin-wire-b §7.1): parse, call `syncGroup` (sync-service.ts: a pending join of the group settles
 * first, then the pull), shape SyncGroupResponseData from the state this node folded. The body is
 * optional and ignored.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requireId } from '../../crypto/ids.ts';
import { Data, Errors, Hex32 } from '../../http/response-schemas.ts';
import type { GovernanceRouteDeps } from '../route-deps.ts';
import { groupInfoView } from '../views.ts';
import { GroupParams } from './schemas.ts';
import { syncGroup } from './sync-service.ts';

const SyncGroupAnswer = Data(
  Type.Object({
    groupId: Hex32(),
    appKey: Hex32(),
    targetApplicationId: Hex32(),
    memberCount: Type.Integer({ minimum: 0 }),
    contextCount: Type.Integer({ minimum: 0 }),
  }),
);

export function registerGroupSyncRoutes(root: FastifyInstance, deps: GovernanceRouteDeps): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const schema = { summary: 'Pull the group’s governance from peers, then answer its counts', params: GroupParams, response: { 200: SyncGroupAnswer, ...Errors(400, 401, 403, 404, 409) } };
  app.post('/admin-api/groups/:groupId/sync', { schema }, async (req) => {
    const groupId = requireId(req.params.groupId, 'group id');
    const { ns, group } = await syncGroup(deps, groupId);
    const info = groupInfoView(ns, group);
    return { data: { groupId, appKey: info.appKey, targetApplicationId: info.targetApplicationId, memberCount: info.memberCount, contextCount: info.contextCount } };
  });
}
