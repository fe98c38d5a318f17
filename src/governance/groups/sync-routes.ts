/**
 * `POST /admin-api/groups/{groupId}/sync` (admin spec "Sync, upgrades and migration";
 * admin-wire-b §7.1): pulls the group's namespace log from the connected peers that hold it, within
 * a deadline, then answers SyncGroupResponseData from the state this node folded. The body is
 * optional and ignored. A group this node has only a pending join for is fetched first (the join
 * completes), so "join, then sync" works even when the join answered before a peer was reachable.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requireId } from '../../crypto/ids.ts';
import { Data, Errors, Hex32 } from '../../http/response-schemas.ts';
import type { GovernanceRouteDeps } from '../routes.ts';
import { groupInfoView } from '../views.ts';
import { GroupParams } from './schemas.ts';

/** What the route needs of replication (governance/replication/replicator.ts). */
export interface GroupSync {
  syncNamespace(namespaceId: string): Promise<{ peers: number; answered: number }>;
}

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
  const schema = { summary: 'Pull the group’s governance from peers, then answer its counts', params: GroupParams, response: { 200: SyncGroupAnswer, ...Errors(400, 401, 403, 404) } };
  app.post('/admin-api/groups/:groupId/sync', { schema }, async (req) => {
    const groupId = requireId(req.params.groupId, 'group id');
    if (!deps.governance.locate(groupId) && (await deps.invitations.pendingJoin(groupId))) await deps.invitations.resolvePending();
    const before = deps.groups.get(groupId);
    await deps.sync?.syncNamespace(before.ns.id);
    const { ns, group } = deps.groups.get(groupId);
    const info = groupInfoView(ns, group);
    return { data: { groupId, appKey: info.appKey, targetApplicationId: info.targetApplicationId, memberCount: info.memberCount, contextCount: info.contextCount } };
  });
}
