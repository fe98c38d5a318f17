/**
 * Namespace, group, context and identity steps (merobox `steps/group_create.py`, `group_invite.py`,
 * `group_join.py`, `context.py`, `identity.py`, `join_context.py`, `subgroup.py`,
 * `group_management.py`, `group_metadata.py`, `join_subgroup_inheritance.py`): each one admin-API
 * call through the SDK, answering the node's response so `outputs` read its fields. merobox's
 * deprecated aliases (create_group, invite, join_open, …) run the step they stand for.
 */
import type { GroupRole, SignedGroupOpenInvitation } from '../../../client/index.ts';
import { clientOf, namespaceOf, str, StepFailure, type Handler, type StepContext } from '../context.ts';
import type { Step } from '../parse.ts';
import { parseJsonLike } from '../values.ts';

const createNamespace: Handler = (s, ctx) =>
  clientOf(ctx, s).namespaces.create({ applicationId: str(s.application_id), ...(s.app_key ? { appKey: str(s.app_key) } : {}) });

const invite: Handler = (s, ctx) => {
  const api = clientOf(ctx, s).invitations;
  return s.recursive === true ? api.inviteToNamespace(namespaceOf(s), { recursive: true }) : api.inviteToNamespace(namespaceOf(s));
};

/** An invitation as a step gives it: the object an earlier step exported, or its JSON text. */
function invitationOf(value: unknown): SignedGroupOpenInvitation {
  const parsed = parseJsonLike(value);
  if (!parsed || typeof parsed !== 'object') throw new StepFailure('invitation is not an invitation object (export it from create_namespace_invitation with outputs: {invitation: invitation})');
  return parsed as SignedGroupOpenInvitation;
}

const join: Handler = (s, ctx) => clientOf(ctx, s).invitations.joinNamespace(namespaceOf(s), invitationOf(s.invitation));

/** merobox role spellings to the node's. */
export function roleOf(value: unknown): GroupRole {
  const r = str(value).toLowerCase().replace(/[-_]/g, '');
  const role = { admin: 'Admin', member: 'Member', readonly: 'ReadOnly' }[r];
  if (!role) throw new StepFailure(`role "${str(value)}" is not Admin, Member or ReadOnly`);
  return role as GroupRole;
}

/**
 * merobox's optional `requester` (delete_context, delete_group, delete_namespace,
 * set_member_auto_follow: "an admin public key", which merobox forwards to the node in the request
 * body): forwarded the same way. A hearth node acts as its own account and ignores the field, as
 * the reference's older clients send it (admin-wire-b §1.5).
 */
const requesterOf = (s: Step) => (s.requester !== undefined && s.requester !== null ? { requester: str(s.requester) } : undefined);

/** With a `requester`, the DELETE goes out with it as its body (the SDK's delete methods send none); without, `plain` runs. */
async function deleting<T>(s: Step, ctx: StepContext, path: string, plain: () => Promise<T>): Promise<T> {
  const body = requesterOf(s);
  return body ? clientOf(ctx, s).http.data<T>(path, { method: 'DELETE', body }) : plain();
}
const seg = (v: unknown) => encodeURIComponent(str(v));

const metadataBody = (s: Record<string, unknown>) => ({ ...(s.record_name !== undefined ? { name: str(s.record_name) } : {}), data: (s.data as Record<string, string>) ?? {} });

export const GOVERNANCE_STEPS: Record<string, Handler> = {
  create_namespace: createNamespace,
  create_group: createNamespace,
  create_namespace_invitation: invite,
  create_group_invitation: invite,
  invite,
  invite_open: invite,
  invite_identity: invite,
  join_namespace: join,
  join_group: join,
  join,
  join_open: join,
  list_namespaces: async (s, ctx) => ({ namespaces: await clientOf(ctx, s).namespaces.list() }),
  leave_namespace: async (s, ctx) => {
    await clientOf(ctx, s).namespaces.leave(str(s.namespace_id));
    return { namespaceId: s.namespace_id };
  },
  delete_namespace: (s, ctx) => deleting(s, ctx, `/admin-api/namespaces/${seg(s.namespace_id)}`, () => clientOf(ctx, s).namespaces.delete(str(s.namespace_id))),

  create_context: (s, ctx) =>
    clientOf(ctx, s).contexts.create({
      groupId: str(s.group_id),
      applicationId: str(s.application_id),
      ...(s.params !== undefined && s.params !== null ? { initializationParams: new TextEncoder().encode(typeof s.params === 'string' ? s.params : JSON.stringify(s.params)) } : {}),
      ...(s.service_name ? { serviceName: str(s.service_name) } : {}),
    }),
  create_identity: async (s, ctx) => ({ publicKey: await clientOf(ctx, s).contexts.newIdentity() }),
  join_context: (s, ctx) => clientOf(ctx, s).contexts.join(str(s.context_id)),
  leave_context: async (s, ctx) => {
    await clientOf(ctx, s).contexts.leave(str(s.context_id));
    return { contextId: s.context_id };
  },
  delete_context: (s, ctx) =>
    deleting(s, ctx, `/admin-api/contexts/${seg(s.context_id)}`, async () => ({ isDeleted: await clientOf(ctx, s).contexts.delete(str(s.context_id)) })),
  resync_context: (s, ctx) => clientOf(ctx, s).contexts.resync(str(s.context_id), s.force === true),
  node_identity: (s, ctx) => clientOf(ctx, s).accounts.identity(),

  create_group_in_namespace: (s, ctx) =>
    clientOf(ctx, s).namespaces.createGroup(str(s.namespace_id), {
      ...(s.group_name ? { groupName: str(s.group_name) } : {}),
      ...(s.visibility ? { visibility: str(s.visibility).toLowerCase() as 'open' | 'restricted' } : {}),
    }),
  list_namespace_groups: async (s, ctx) => ({ groups: await clientOf(ctx, s).namespaces.groups(str(s.namespace_id)) }),
  list_subgroups: async (s, ctx) => ({ subgroups: await clientOf(ctx, s).groups.subgroups(str(s.group_id)) }),
  reparent_group: async (s, ctx) => ({ reparented: await clientOf(ctx, s).groups.reparent(str(s.child_group_id), str(s.new_parent_id)) }),
  get_group_info: (s, ctx) => clientOf(ctx, s).groups.info(str(s.group_id)),
  delete_group: (s, ctx) => deleting(s, ctx, `/admin-api/groups/${seg(s.group_id)}`, () => clientOf(ctx, s).groups.deleteGroup(str(s.group_id))),
  leave_group: async (s, ctx) => {
    await clientOf(ctx, s).groups.leave(str(s.group_id));
    return { groupId: s.group_id };
  },
  join_subgroup_inheritance: (s, ctx) => clientOf(ctx, s).groups.joinViaInheritance(str(s.group_id)),
  sync_group: (s, ctx) => clientOf(ctx, s).groups.sync(str(s.group_id)),
  list_group_contexts: async (s, ctx) => ({ contexts: await clientOf(ctx, s).groups.contexts(str(s.group_id)) }),
  detach_context_from_group: async (s, ctx) => {
    await clientOf(ctx, s).groups.removeContext(str(s.group_id), str(s.context_id));
    return { groupId: s.group_id, contextId: s.context_id };
  },
  // the secret is never answered back nor kept in the step's record (nodes.ts leaves the request body out)
  register_group_signing_key: async (s, ctx) => ({ registered: true, ...(await clientOf(ctx, s).groups.registerSigningKey(str(s.group_id), { signingKey: str(s.signing_key) })) }),

  add_group_members: async (s, ctx) => {
    const members = (s.members as { identity?: unknown; role?: unknown }[]).map((m) => ({ identity: str(m.identity), role: roleOf(m.role ?? 'Member') }));
    await clientOf(ctx, s).groups.addMembers(str(s.group_id), members);
    return { added: members.length };
  },
  remove_group_members: async (s, ctx) => {
    const members = (s.members as unknown[]).map(str);
    await clientOf(ctx, s).groups.removeMembers(str(s.group_id), members);
    return { removed: members.length };
  },
  list_group_members: async (s, ctx) => ({ members: await clientOf(ctx, s).groups.members(str(s.group_id)) }),
  update_member_role: async (s, ctx) => {
    await clientOf(ctx, s).groups.setMemberRole(str(s.group_id), str(s.member_id), roleOf(s.role));
    return { memberId: s.member_id, role: roleOf(s.role) };
  },
  set_member_capabilities: async (s, ctx) => {
    await clientOf(ctx, s).settings.setMemberCapabilities(str(s.group_id), str(s.member_id), Number(s.capabilities));
    return { capabilities: Number(s.capabilities) };
  },
  get_member_capabilities: async (s, ctx) => ({ capabilities: await clientOf(ctx, s).settings.memberCapabilities(str(s.group_id), str(s.member_id)) }),
  set_member_auto_follow: async (s, ctx) => {
    const follow = { autoFollowContexts: s.auto_follow_contexts === true, autoFollowSubgroups: s.auto_follow_subgroups === true };
    const requester = requesterOf(s);
    if (requester) await clientOf(ctx, s).http.send(`/admin-api/groups/${seg(s.group_id)}/members/${seg(s.member_id)}/auto-follow`, { method: 'PUT', body: { ...follow, ...requester } });
    else await clientOf(ctx, s).groups.setAutoFollow(str(s.group_id), str(s.member_id), follow);
    return follow;
  },
  set_default_capabilities: async (s, ctx) => {
    await clientOf(ctx, s).settings.setDefaultCapabilities(str(s.group_id), Number(s.capabilities));
    return { defaultCapabilities: Number(s.capabilities) };
  },
  set_subgroup_visibility: async (s, ctx) => {
    const visibility = str(s.visibility).toLowerCase() as 'open' | 'restricted';
    await clientOf(ctx, s).settings.setSubgroupVisibility(str(s.group_id), visibility);
    return { subgroupVisibility: visibility };
  },
  set_group_metadata: async (s, ctx) => {
    await clientOf(ctx, s).settings.setGroupMetadata(str(s.group_id), metadataBody(s));
    return metadataBody(s);
  },
  get_group_metadata: async (s, ctx) => ({ metadata: await clientOf(ctx, s).settings.groupMetadata(str(s.group_id)) }),
  set_member_metadata: async (s, ctx) => {
    await clientOf(ctx, s).settings.setMemberMetadata(str(s.group_id), str(s.member_id), metadataBody(s));
    return metadataBody(s);
  },
  get_member_metadata: async (s, ctx) => ({ metadata: await clientOf(ctx, s).settings.memberMetadata(str(s.group_id), str(s.member_id)) }),
  set_context_metadata: async (s, ctx) => {
    await clientOf(ctx, s).settings.setContextMetadata(str(s.group_id), str(s.context_id), metadataBody(s));
    return metadataBody(s);
  },
  get_context_metadata: async (s, ctx) => ({ metadata: await clientOf(ctx, s).settings.contextMetadata(str(s.group_id), str(s.context_id)) }),
};
GOVERNANCE_STEPS.set_default_visibility = GOVERNANCE_STEPS.set_subgroup_visibility!;
