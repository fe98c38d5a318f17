/**
 * The join op (admin-wire-b §2.8, §4.17; domain.md §4.5 `MemberJoinedAt`): the joining account
 * carries the signed invitation, and every node applying it re-checks the inviter's signature, the
 * expiry against the op's own timestamp, the inviter's authority in the group, and the admission
 * rules (admission.ts: not revoked, not used by another account, no removal since it was issued),
 * then adds the row with the invited role. The revoke op spends an invitation for every node.
 */
import { badRequest, conflict } from '../../errors.ts';
import type { ApplierRegistry } from '../appliers.ts';
import { groupOf, requireCapability } from '../authority.ts';
import { clearRemoval, requireAdmissible } from './admission.ts';
import { requireInviter } from './inviter.ts';
import { INVITED_ROLES, hexOf, invitationHash, parseInvitation, signatureValid } from './codec.ts';

export const INVITATION_OPS = { joined: 'invitation.memberJoined', revoked: 'invitation.revoked' } as const;

export function registerInvitationOps(registry: ApplierRegistry): void {
  registry.register(INVITATION_OPS.joined, ({ ns, op, emit }) => {
    const inv = parseInvitation(op.body.invitation);
    const group = groupOf(ns, hexOf(inv.invitation.group_id));
    if (group.id !== op.groupId) throw badRequest('invitation group_id does not match the op group');
    if (!signatureValid(inv)) throw badRequest('invalid invitation signature');
    if (Math.floor(op.timestampMs / 1000) > inv.invitation.expiration_timestamp) throw conflict('invitation expired');
    if (!inv.inviter_account) throw badRequest('invalid invitation: missing `inviter_account`');
    requireInviter(ns, group, inv);
    const key = invitationHash(inv.invitation).toString('hex');
    const consumed = (group.consumedInvitations ??= {});
    if (consumed[key]?.includes(op.account)) throw conflict(`invitation already consumed by account ${op.account}`);
    requireAdmissible(ns, group, inv, op.account, op.signer);
    if (group.members[op.account]) throw conflict(`account ${op.account} is already a member of group '${group.id}'`);
    const role = INVITED_ROLES[inv.invitation.invited_role]!;
    group.members[op.account] = { role, autoFollow: { contexts: true, subgroups: false }, metadata: null, joinedAt: op.timestampMs };
    consumed[key] = [...(consumed[key] ?? []), op.account];
    clearRemoval(group, op.account);
    emit(group.id, 'MemberJoined', { memberAccount: op.account, role });
  });

  // revoking an invitation: a member with invite authority in the group; every node refuses it from
  // then on (a join that sorts before the revocation in the log's order stays valid)
  registry.register(INVITATION_OPS.revoked, ({ ns, op }) => {
    const group = groupOf(ns, op.groupId);
    const id = op.body.invitationId;
    if (typeof id !== 'string' || !/^[0-9a-f]{64}$/.test(id)) throw badRequest('invitationId must be 64 lowercase hex characters');
    requireCapability(ns, group, op.account, 'CAN_INVITE_MEMBERS');
    if (group.revokedInvitations?.[id]) throw conflict(`invitation ${id} is already revoked`);
    (group.revokedInvitations ??= {})[id] = { by: op.account, at: op.timestampMs };
  });
}
