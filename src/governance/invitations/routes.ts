/**
 * Invitation routes (admin-wire-b §2.7–§2.8, §4.16–§4.17): parse, call, shape. The invite body is
 * optional (no body, an empty body or `{}`): `expirationTimestamp` is a duration in seconds.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { parseId, requireId } from '../../crypto/ids.ts';
import { badRequest } from '../../errors.ts';
import type { GovernanceRouteDeps } from '../route-deps.ts';
import type { InviteInput } from './service.ts';
import { CreateInvitationDoc, InvitationAnswer, JoinGroupAnswer, JoinRequest, RevokeInvitationAnswer, RevokeInvitationRequest } from './schemas.ts';
import { emptyJsonAsNoBody } from '../../http/body.ts';
import { Data, Errors } from '../../http/response-schemas.ts';
import { JoinNamespaceAnswer, NamespaceInviteAnswer } from '../namespaces/response-schemas.ts';
import { GroupParams } from '../groups/schemas.ts';
import { NamespaceParams } from '../namespaces/schemas.ts';

function inviteBody(body: unknown): InviteInput & { recursive: boolean } {
  if (body === undefined || body === null) return { recursive: false };
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('Invalid JSON data: expected an object');
  const b = body as Record<string, unknown>;
  const exp = b.expirationTimestamp;
  if (exp !== undefined && exp !== null && !(Number.isSafeInteger(exp) && (exp as number) >= 0)) {
    throw badRequest('Invalid JSON data: expirationTimestamp must be a non-negative number of seconds');
  }
  if (b.recursive !== undefined && typeof b.recursive !== 'boolean') throw badRequest('Invalid JSON data: recursive must be a boolean');
  const list = (name: string, v: unknown): string[] | undefined => {
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw badRequest(`Invalid JSON data: ${name} must be a list of strings`);
    return v as string[];
  };
  const admitters = list('admitters', b.admitters)?.map((a, i) => {
    const id = parseId(a);
    if (!id) throw badRequest(`Invalid admitters[${i}]: expected hex-encoded 32 bytes`);
    return id;
  });
  return { expirationSecs: (exp ?? undefined) as number | undefined, admitters, admitterAddrs: list('admitterAddrs', b.admitterAddrs), recursive: b.recursive === true };
}

export function registerInvitationRoutes(root: FastifyInstance, deps: GovernanceRouteDeps): void {
  void root.register(async (scope) => {
    // an optional body may arrive empty with a JSON content type: read it as no body
    emptyJsonAsNoBody(scope);
    routes(scope, deps);
  });
}

function routes(root: FastifyInstance, deps: GovernanceRouteDeps): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const { invitations, namespaces, governance } = deps;

  const inviteGroup = {
    schema: { summary: 'Mint a signed invitation to a group', params: GroupParams, response: { 200: Data(InvitationAnswer), ...Errors(400, 401, 403, 404) } },
    // `recursive` is read and ignored here: it is a namespace feature
    config: { docs: { body: CreateInvitationDoc } },
  };
  app.post('/admin-api/groups/:groupId/invite', inviteGroup, async (req) => {
    const { recursive: _ignored, ...input } = inviteBody(req.body);
    return { data: await invitations.invite(requireId(req.params.groupId, 'group id'), input) };
  });

  const joinGroup = { summary: 'Join a group with an invitation', body: JoinRequest, response: { 200: Data(JoinGroupAnswer), ...Errors(400, 401, 403, 409) } };
  app.post('/admin-api/groups/join', { schema: joinGroup }, async (req) => {
    const r = await invitations.join(req.body.invitation);
    return { data: { groupId: r.groupId, memberIdentity: r.memberIdentity, memberAccount: r.memberAccount } };
  });

  // hearth-only (docs/decisions.md): the spec has no way to withdraw an invitation once handed out
  const revoke = {
    summary: 'Revokes an invitation to the group (hearth): every member node refuses it from then on',
    params: GroupParams,
    body: RevokeInvitationRequest,
    response: { 200: Data(RevokeInvitationAnswer), ...Errors(400, 401, 403, 404, 409) },
  };
  app.post('/admin-api/groups/:groupId/invitations/revoke', { schema: revoke }, async (req) => {
    const { invitation, invitationId } = req.body;
    return { data: await invitations.revoke(requireId(req.params.groupId, 'group id'), { invitation, invitationId }) };
  });

  const inviteNamespace = {
    schema: {
      summary: 'Mints a signed namespace invitation (or, with recursive, one per group the inviter may invite to)',
      params: NamespaceParams,
      response: { 200: NamespaceInviteAnswer, ...Errors(400, 401, 403, 404) },
    },
    config: { docs: { body: CreateInvitationDoc } },
  };
  app.post('/admin-api/namespaces/:namespaceId/invite', inviteNamespace, async (req) => {
    const nsId = requireId(req.params.namespaceId, 'namespace id');
    if (governance.namespace(nsId)) namespaces.get(nsId); // a namespace outside the session's scope → 404; a subgroup → 400 below
    const { recursive, ...input } = inviteBody(req.body);
    return { data: await invitations.inviteNamespace(nsId, input, recursive) };
  });

  const joinNamespace = {
    summary: 'Joins a namespace with an invitation (recorded as pending while the namespace is unknown here)',
    params: NamespaceParams,
    body: JoinRequest,
    response: { 200: JoinNamespaceAnswer, ...Errors(400, 401, 403, 404, 409) },
  };
  app.post('/admin-api/namespaces/:namespaceId/join', { schema: joinNamespace }, async (req) => {
    const r = await invitations.join(req.body.invitation, requireId(req.params.namespaceId, 'namespace id'));
    // `groupId`: the same id under the name clients before the rc.25 rename read (docs/decisions.md)
    return { data: { namespaceId: r.groupId, groupId: r.groupId, memberIdentity: r.memberIdentity, memberAccount: r.memberAccount } };
  });
}
