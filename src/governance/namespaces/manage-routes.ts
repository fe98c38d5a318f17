/**
 * Namespace management routes (admin spec "Namespaces"; admin-wire-b §2.5, §2.6, §2.9, §2.11, §2.12,
 * §2.10, §2.14, §2.15): parse, call, shape. Invite, join, admin change are registered elsewhere.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AccountService } from '../../accounts/service.ts';
import { isHexBytes, requireId } from '../../crypto/ids.ts';
import { badRequest } from '../../errors.ts';
import { namespaceView } from '../views.ts';
import type { NamespaceManageService } from './manage-service.ts';
import type { NamespaceService } from './service.ts';

export interface NamespaceManageDeps {
  manage: NamespaceManageService;
  namespaces: NamespaceService;
  accounts: AccountService;
}

const none = (reply: FastifyReply) => reply.code(200).send();
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Optional bodies (spec): absent, empty or a JSON object. */
function optionalBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null || body === '') return {};
  if (!isObject(body)) throw badRequest('Invalid JSON data: expected an object');
  return body;
}

export function registerNamespaceManageRoutes(root: FastifyInstance, deps: NamespaceManageDeps): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const { manage, namespaces, accounts } = deps;
  const nsId = (p: unknown) => requireId((p as { namespaceId: string }).namespaceId, 'namespace id');

  app.delete('/admin-api/namespaces/:namespaceId', async (req) => {
    optionalBody(req.body);
    await manage.delete(nsId(req.params));
    return { data: { isDeleted: true } };
  });

  app.get('/admin-api/namespaces/for-application/:applicationId', async (req) => {
    const appId = requireId((req.params as { applicationId: string }).applicationId, 'application id');
    return { data: manage.forApplication(appId).map(namespaceView) };
  });

  app.post('/admin-api/namespaces/:namespaceId/leave', async (req, reply) => {
    await manage.leave(nsId(req.params));
    return none(reply);
  });

  app.get('/admin-api/namespaces/:namespaceId/groups', async (req) => ({ data: manage.groups(nsId(req.params)) }));

  app.post('/admin-api/namespaces/:namespaceId/groups', async (req) => {
    const id = nsId(req.params);
    const b = optionalBody(req.body);
    if (b.groupId !== undefined) throw badRequest('groupId is not accepted: group ids are derived by the node');
    // older clients send `alias` (SDK 13.2.0) or `name`: read as the group name (README rule 3)
    const name = b.groupName ?? b.name ?? b.alias;
    if (name !== undefined && typeof name !== 'string') throw badRequest('groupName must be a string');
    const v = b.visibility;
    if (v !== undefined && (typeof v !== 'string' || !['open', 'restricted'].includes(v.toLowerCase()))) {
      throw badRequest("visibility must be 'open' or 'restricted'");
    }
    const visibility = v === undefined ? 'open' : ((v as string).toLowerCase() as 'open' | 'restricted');
    return { data: { groupId: await manage.createGroup(id, { name, visibility }) } };
  });

  app.post('/admin-api/namespaces/:namespaceId/account/revoke', async (req) => {
    const id = nsId(req.params);
    const b = optionalBody(req.body);
    if (typeof b.deviceId !== 'string') throw badRequest('deviceId is required');
    const deviceId = requireId(b.deviceId, 'deviceId');
    // this node holds the account root, so it signs the revocation itself; a proof is only checked for shape
    if (b.proof !== undefined && (typeof b.proof !== 'string' || b.proof === '' || !isHexBytes(b.proof))) {
      throw badRequest('proof: expected non-empty hex; omit the field if you have no proof');
    }
    namespaces.get(id);
    return { data: await accounts.revoke(id, deviceId) };
  });

  app.post('/admin-api/namespaces/:namespaceId/account/link-device', async (req) => {
    const id = nsId(req.params);
    const b = optionalBody(req.body);
    for (const k of ['credential', 'scope'] as const) {
      if (typeof b[k] !== 'string' || !isHexBytes(b[k] as string)) throw badRequest(`${k}: expected non-empty hex`);
    }
    namespaces.get(id);
    return { data: await accounts.linkDevice(id, (b.credential as string).toLowerCase(), (b.scope as string).toLowerCase()) };
  });

  app.post('/admin-api/namespaces/:namespaceId/admit', async (req) => {
    const id = nsId(req.params);
    const b = optionalBody(req.body);
    if (b.invitation === undefined) throw badRequest('invitation is required');
    if (typeof b.signedOp !== 'string' || b.signedOp.trim() === '') throw badRequest('signedOp must be non-blank hex');
    await manage.admit(id, b.invitation, b.signedOp);
    return { data: { published: true } };
  });
}
