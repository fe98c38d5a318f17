/**
 * Namespace management routes (admin spec "Namespaces"; admin-wire-b §2.5, §2.6, §2.9, §2.11, §2.12,
 * §2.10, §2.14, §2.15): parse, call, shape. Invite, join, admin change are registered elsewhere.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { isHexBytes, requireId } from '../../crypto/ids.ts';
import { badRequest } from '../../errors.ts';
import { Empty, Errors } from '../../http/response-schemas.ts';
import { namespaceView } from '../views.ts';
import type { NamespaceManageService } from './manage-service.ts';
import type { NamespaceService } from './service.ts';
import { AdmitDoc, CreateSubgroupDoc, ForApplicationParams, LinkDeviceDoc, NamespaceParams, RevokeDeviceDoc } from './schemas.ts';
import {
  AdmitAnswer,
  DeletedAnswer,
  LinkDeviceAnswer,
  NamespaceListAnswer,
  RevokeDeviceAnswer,
  SubgroupCreatedAnswer,
  SubgroupListAnswer,
} from './response-schemas.ts';
import { emptyOk } from '../../http/reply.ts';
import type { NamespaceAccounts } from '../route-deps.ts';

export interface NamespaceManageDeps {
  manage: NamespaceManageService;
  namespaces: NamespaceService;
  accounts: NamespaceAccounts;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Route options: summary, path parameters and answers; `body` is documentation only (the handlers parse it). */
function docs<R extends object>(summary: string, response: R, body?: object) {
  return { schema: { summary, params: NamespaceParams, response }, ...(body ? { config: { docs: { body } } } : {}) };
}

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

  const deleted = docs('Deletes a namespace (an admin of the root; the body is optional and empty)', { 200: DeletedAnswer, ...Errors(400, 401, 403, 404) });
  app.delete('/admin-api/namespaces/:namespaceId', deleted, async (req) => {
    optionalBody(req.body);
    await manage.delete(nsId(req.params));
    return { data: { isDeleted: true as const } };
  });

  const forApp = {
    schema: { summary: 'The namespaces of one application', params: ForApplicationParams, response: { 200: NamespaceListAnswer, ...Errors(400, 401, 403) } },
  };
  app.get('/admin-api/namespaces/for-application/:applicationId', forApp, async (req) => {
    const appId = requireId((req.params as { applicationId: string }).applicationId, 'application id');
    return { data: manage.forApplication(appId).map(namespaceView) };
  });

  const leave = docs('Cascading self-leave (the owner cannot leave); empty 200', { 200: Empty(), ...Errors(400, 401, 403, 404, 409) });
  app.post('/admin-api/namespaces/:namespaceId/leave', leave, async (req, reply) => {
    await manage.leave(nsId(req.params));
    return emptyOk(reply);
  });

  const groups = docs('Every group below the namespace root', { 200: SubgroupListAnswer, ...Errors(400, 401, 403, 404) });
  app.get('/admin-api/namespaces/:namespaceId/groups', groups, async (req) => ({ data: manage.groups(nsId(req.params)) }));

  const createGroup = docs('Creates a subgroup directly below the root (derived id)', { 200: SubgroupCreatedAnswer, ...Errors(400, 401, 403, 404) }, CreateSubgroupDoc);
  app.post('/admin-api/namespaces/:namespaceId/groups', createGroup, async (req) => {
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

  const revoke = docs('Revokes a device of this node\'s account in every namespace (forward-only)', { 200: RevokeDeviceAnswer, ...Errors(400, 401, 403, 404, 409) }, RevokeDeviceDoc);
  app.post('/admin-api/namespaces/:namespaceId/account/revoke', revoke, async (req) => {
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

  const link = docs('Carries the link of a member account\'s device into the namespace', { 200: LinkDeviceAnswer, ...Errors(400, 401, 403, 404) }, LinkDeviceDoc);
  app.post('/admin-api/namespaces/:namespaceId/account/link-device', link, async (req) => {
    const id = nsId(req.params);
    const b = optionalBody(req.body);
    for (const k of ['credential', 'scope'] as const) {
      if (typeof b[k] !== 'string' || !isHexBytes(b[k] as string)) throw badRequest(`${k}: expected non-empty hex`);
    }
    namespaces.get(id);
    return { data: await accounts.linkDevice(id, (b.credential as string).toLowerCase(), (b.scope as string).toLowerCase()) };
  });

  const admit = docs('Admits and publishes a keyholder\'s self-signed join (this node must be an admitter)', { 200: AdmitAnswer, ...Errors(400, 401, 403, 404, 409) }, AdmitDoc);
  app.post('/admin-api/namespaces/:namespaceId/admit', admit, async (req) => {
    const id = nsId(req.params);
    const b = optionalBody(req.body);
    if (b.invitation === undefined) throw badRequest('invitation is required');
    if (typeof b.signedOp !== 'string' || b.signedOp.trim() === '') throw badRequest('signedOp must be non-blank hex');
    await manage.admit(id, b.invitation, b.signedOp);
    return { data: { published: true as const } };
  });
}
