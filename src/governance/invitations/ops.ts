/**
 * The join op (admin-wire-b §2.8, §4.17; domain.md §4.5 `MemberJoinedAt`): the joining account
 * carries the signed invitation, and every node applying it re-checks the inviter's signature, the
 * expiry against the op's own timestamp, the inviter's authority in the group, and single use per
 * account, then adds the row with the invited role.
 */
import { badRequest, conflict } from '../../errors.ts';
import type { ApplierRegistry } from '../appliers.ts';
import { groupOf } from '../authority.ts';
import { requireInviter } from './inviter.ts';
import { INVITED_ROLES, hexOf, invitationHash, parseInvitation, signatureValid } from './codec.ts';

export const INVITATION_OPS = { joined: 'invitation.memberJoined' } as const;

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
    if (group.members[op.account]) throw conflict(`account ${op.account} is already a member of group '${group.id}'`);
    const role = INVITED_ROLES[inv.invitation.invited_role]!;
    group.members[op.account] = { role, autoFollow: { contexts: true, subgroups: false }, metadata: null, joinedAt: op.timestampMs };
    consumed[key] = [...(consumed[key] ?? []), op.account];
    emit(group.id, 'MemberJoined', { memberAccount: op.account, role });
  });
}
