/**
 * `POST /admin-api/contexts/invite-specialized-node` (admin spec "Contexts"; admin-wire-a: body
 * `{contextId, inviterId?}`, answer `{data: {nonce}}`): asks specialized nodes to join the context
 * as read-only replicas (specialized.ts). On a node without a network: 503 naming why.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireId } from '../crypto/ids.ts';
import { unavailable } from '../errors.ts';
import { Data, Errors, Hex32 } from '../http/response-schemas.ts';
import type { SpecializedInvites } from './specialized.ts';

const Request = Type.Object({
  contextId: Type.String({ description: 'the context to replicate: 64 hex (base58 accepted)' }),
  inviterId: Type.Optional(Type.String({ description: 'an identity this node holds in the context' })),
});

export function registerSyncRoutes(root: FastifyInstance, deps: { specialized?: SpecializedInvites }): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const schema = {
    summary: 'Invite a specialized (read-only replica) node into a context; answers the discovery nonce',
    body: Request,
    response: { 200: Data(Type.Object({ nonce: Hex32('the discovery nonce the specialized node answers') })), ...Errors(400, 401, 403, 404, 503) },
  };
  app.post('/admin-api/contexts/invite-specialized-node', { schema }, async (req) => {
    if (!deps.specialized) throw unavailable('this node runs without a network: there is no specialized node to invite');
    const contextId = requireId(req.body.contextId, 'contextId');
    const inviterId = req.body.inviterId === undefined ? undefined : requireId(req.body.inviterId, 'inviterId');
    return { data: await deps.specialized.invite(contextId, inviterId) };
  });
}
