/**
 * Membership and tree routes of the admin spec "Groups" table (admin-wire-b §4.4–§4.15, §4.18):
 * parse, call, shape. Flat vs enveloped bodies follow admin-wire-b §1.2; "none" responses are an
 * empty 200 (reference README). Routes whose spec body is optional accept no body, an empty body
 * even when it is declared JSON, and ignore fields older clients send (`requester`).
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requireId } from '../../crypto/ids.ts';
import { badRequest } from '../../errors.ts';
import type { GovernanceRouteDeps } from '../route-deps.ts';
import { MEMBER_DEVICES_DEFAULT_LIMIT } from './members-service.ts';
import { Empty, Errors } from '../../http/response-schemas.ts';
import {
  AddMembersRequest,
  AutoFollowRequest,
  ContextParams,
  ContextsAnswer,
  DeletedAnswer,
  JoinViaInheritanceAnswer,
  MemberDevicesAnswer,
  MemberDevicesQuery,
  MemberParams,
  MembersAnswer,
  RemoveMembersRequest,
  ReparentedAnswer,
  ReparentRequest,
  SubgroupsAnswer,
  UpdateRoleRequest,
} from './members-schemas.ts';
import { emptyJsonAsNoBody } from '../../http/body.ts';
import { emptyOk } from '../../http/reply.ts';
import { GroupParams } from './schemas.ts';

/** What a "none" write answers (an empty 200), and the refusals these routes share. */
const written = (...errors: number[]) => ({ 200: Empty('Done (spec: none): an empty 200'), ...Errors(400, 401, 403, 404, ...errors) });
const read = <T>(answer: T) => ({ 200: answer, ...Errors(400, 401, 403, 404) });

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

  const deleteSchema = { summary: 'Delete a subgroup and its subtree', params: GroupParams, response: read(DeletedAnswer) };
  app.delete('/admin-api/groups/:groupId', { schema: deleteSchema }, async (req) => {
    await members.deleteGroup(groupIdOf(req.params));
    return { data: { isDeleted: true } };
  });

  app.get('/admin-api/groups/:groupId/members', { schema: { summary: 'Members (flat)', params: GroupParams, response: read(MembersAnswer) } }, async (req) => ({
    members: members.members(groupIdOf(req.params)),
  }));

  const addSchema = { summary: 'Add members', params: GroupParams, body: AddMembersRequest, response: written() };
  app.post('/admin-api/groups/:groupId/members', { schema: addSchema }, async (req, reply) => {
    const groupId = groupIdOf(req.params);
    const list = req.body.members.map((m, i) => ({ identity: requireId(m.identity, `members[${i}].identity`), role: m.role }));
    await members.addMembers(groupId, list);
    return emptyOk(reply);
  });

  const removeSchema = { summary: 'Remove members', params: GroupParams, body: RemoveMembersRequest, response: written(409) };
  app.post('/admin-api/groups/:groupId/members/remove', { schema: removeSchema }, async (req, reply) => {
    const groupId = groupIdOf(req.params);
    await members.removeMembers(groupId, req.body.members.map((m, i) => requireId(m, `members[${i}]`)));
    return emptyOk(reply);
  });

  const roleSchema = { summary: 'Set a member’s role', params: MemberParams, body: UpdateRoleRequest, response: written(409) };
  app.put('/admin-api/groups/:groupId/members/:account/role', { schema: roleSchema }, async (req, reply) => {
    await members.setRole(groupIdOf(req.params), requireId(req.params.account, 'account'), req.body.role);
    return emptyOk(reply);
  });

  const followSchema = { summary: 'Set a member’s auto-follow flags', params: MemberParams, body: AutoFollowRequest, response: written() };
  app.put('/admin-api/groups/:groupId/members/:account/auto-follow', { schema: followSchema }, async (req, reply) => {
    const b = req.body;
    await members.setAutoFollow(groupIdOf(req.params), requireId(req.params.account, 'account'), b.autoFollowContexts, b.autoFollowSubgroups);
    return emptyOk(reply);
  });

  const devicesSchema = { summary: 'Members’ devices (flat, paged)', params: GroupParams, querystring: MemberDevicesQuery, response: read(MemberDevicesAnswer) };
  app.get('/admin-api/groups/:groupId/member-devices', { schema: devicesSchema }, async (req) => {
    const offset = nonNegative(req.query.offset, 'offset', 0);
    const limit = nonNegative(req.query.limit, 'limit', MEMBER_DEVICES_DEFAULT_LIMIT);
    return { members: members.memberDevices(groupIdOf(req.params), offset, limit) };
  });

  const contextsSchema = { summary: 'Contexts registered in the group', params: GroupParams, response: read(ContextsAnswer) };
  app.get('/admin-api/groups/:groupId/contexts', { schema: contextsSchema }, async (req) => ({
    data: members.contexts(groupIdOf(req.params)),
  }));

  const detachSchema = { summary: 'Detach a context from the group', params: ContextParams, response: written() };
  app.post('/admin-api/groups/:groupId/contexts/:contextId/remove', { schema: detachSchema }, async (req, reply) => {
    await members.removeContext(groupIdOf(req.params), requireId(req.params.contextId, 'context id'));
    return emptyOk(reply);
  });

  const subgroupsSchema = { summary: 'Direct subgroups (flat)', params: GroupParams, response: read(SubgroupsAnswer) };
  app.get('/admin-api/groups/:groupId/subgroups', { schema: subgroupsSchema }, async (req) => ({
    subgroups: members.subgroups(groupIdOf(req.params)),
  }));

  // the path segment is the child group (spec: /groups/{childGroupId}/reparent)
  const reparentSchema = {
    summary: 'Move a subgroup under another parent (flat answer)',
    params: GroupParams,
    body: ReparentRequest,
    response: { ...read(ReparentedAnswer), ...Errors(409) },
  };
  app.post('/admin-api/groups/:groupId/reparent', { schema: reparentSchema }, async (req) => {
    await members.reparent(groupIdOf(req.params), requireId(req.body.newParentId, 'newParentId'));
    return { reparented: true };
  });

  app.post('/admin-api/groups/:groupId/leave', { schema: { summary: 'Leave a subgroup', params: GroupParams, response: written(409) } }, async (req, reply) => {
    await members.leave(groupIdOf(req.params));
    return emptyOk(reply);
  });

  const inheritSchema = { summary: 'Join an open subgroup through inherited membership', params: GroupParams, response: read(JoinViaInheritanceAnswer) };
  app.post('/admin-api/groups/:groupId/join-via-inheritance', { schema: inheritSchema }, async (req) => ({
    data: await members.joinViaInheritance(groupIdOf(req.params)),
  }));
}
