/**
 * Membership and tree routes of the admin spec "Groups" table (admin-wire-b §4.4–§4.15, §4.18):
 * parse, call, shape. Flat vs enveloped bodies follow admin-wire-b §1.2; "none" responses are an
 * empty 200 (reference README). Routes whose spec body is optional accept no body, an empty body
 * even when it is declared JSON, and ignore fields older clients send (`requester`).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requireId } from '../../crypto/ids.ts';
import { badRequest } from '../../errors.ts';
import type { GovernanceRouteDeps } from '../routes.ts';
import { MEMBER_DEVICES_DEFAULT_LIMIT } from './members-service.ts';
import {
  AddMembersRequest,
  AutoFollowRequest,
  ContextParams,
  GroupParams,
  MemberDevicesQuery,
  MemberParams,
  RemoveMembersRequest,
  ReparentRequest,
  UpdateRoleRequest,
} from './members-schemas.ts';
import { emptyJsonAsNoBody } from '../../http/body.ts';

const none = (reply: FastifyReply) => reply.code(200).send();

function nonNegative(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d{1,9}$/.test(value)) throw badRequest(`Invalid ${name}: expected a non-negative integer`);
  return Number(value);
}

const groupIdOf = (p: { groupId: string }) => requireId(p.groupId, 'group id');

export function registerMembersRoutes(root: FastifyInstance, deps: GovernanceRouteDeps): void {
  void root.register(async (scope) => {
    // an optional body may arrive empty with a JSON content type: read it as no body
    emptyJsonAsNoBody(scope);
    routes(scope, deps);
  });
}

function routes(root: FastifyInstance, deps: GovernanceRouteDeps): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const { members } = deps;

  app.delete('/admin-api/groups/:groupId', { schema: { params: GroupParams } }, async (req) => {
    await members.deleteGroup(groupIdOf(req.params));
    return { data: { isDeleted: true } };
  });

  app.get('/admin-api/groups/:groupId/members', { schema: { params: GroupParams } }, async (req) => ({
    members: members.members(groupIdOf(req.params)),
  }));

  app.post('/admin-api/groups/:groupId/members', { schema: { params: GroupParams, body: AddMembersRequest } }, async (req, reply) => {
    const groupId = groupIdOf(req.params);
    const list = req.body.members.map((m, i) => ({ identity: requireId(m.identity, `members[${i}].identity`), role: m.role }));
    await members.addMembers(groupId, list);
    return none(reply);
  });

  app.post('/admin-api/groups/:groupId/members/remove', { schema: { params: GroupParams, body: RemoveMembersRequest } }, async (req, reply) => {
    const groupId = groupIdOf(req.params);
    await members.removeMembers(groupId, req.body.members.map((m, i) => requireId(m, `members[${i}]`)));
    return none(reply);
  });

  app.put('/admin-api/groups/:groupId/members/:account/role', { schema: { params: MemberParams, body: UpdateRoleRequest } }, async (req, reply) => {
    await members.setRole(groupIdOf(req.params), requireId(req.params.account, 'account'), req.body.role);
    return none(reply);
  });

  app.put('/admin-api/groups/:groupId/members/:account/auto-follow', { schema: { params: MemberParams, body: AutoFollowRequest } }, async (req, reply) => {
    const b = req.body;
    await members.setAutoFollow(groupIdOf(req.params), requireId(req.params.account, 'account'), b.autoFollowContexts, b.autoFollowSubgroups);
    return none(reply);
  });

  app.get('/admin-api/groups/:groupId/member-devices', { schema: { params: GroupParams, querystring: MemberDevicesQuery } }, async (req) => {
    const offset = nonNegative(req.query.offset, 'offset', 0);
    const limit = nonNegative(req.query.limit, 'limit', MEMBER_DEVICES_DEFAULT_LIMIT);
    return { members: members.memberDevices(groupIdOf(req.params), offset, limit) };
  });

  app.get('/admin-api/groups/:groupId/contexts', { schema: { params: GroupParams } }, async (req) => ({
    data: members.contexts(groupIdOf(req.params)),
  }));

  app.post('/admin-api/groups/:groupId/contexts/:contextId/remove', { schema: { params: ContextParams } }, async (req, reply) => {
    await members.removeContext(groupIdOf(req.params), requireId(req.params.contextId, 'context id'));
    return none(reply);
  });

  app.get('/admin-api/groups/:groupId/subgroups', { schema: { params: GroupParams } }, async (req) => ({
    subgroups: members.subgroups(groupIdOf(req.params)),
  }));

  // the path segment is the child group (spec: /groups/{childGroupId}/reparent)
  app.post('/admin-api/groups/:groupId/reparent', { schema: { params: GroupParams, body: ReparentRequest } }, async (req) => {
    await members.reparent(groupIdOf(req.params), requireId(req.body.newParentId, 'newParentId'));
    return { reparented: true };
  });

  app.post('/admin-api/groups/:groupId/leave', { schema: { params: GroupParams } }, async (req, reply) => {
    await members.leave(groupIdOf(req.params));
    return none(reply);
  });

  app.post('/admin-api/groups/:groupId/join-via-inheritance', { schema: { params: GroupParams } }, async (req) => ({
    data: await members.joinViaInheritance(groupIdOf(req.params)),
  }));
}
