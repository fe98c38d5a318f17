/**
 * Whether an invitation's inviter may admit into a group (admin-wire-b §2.8, §4.17; domain.md §4.5):
 * the key that signed it must speak for the account it names as `inviter_account` (signers.ts), and
 * that account must hold `CAN_INVITE_MEMBERS` in the group. Without the first check any member could
 * sign an invitation naming an admin's account. Every node checks it the same way: the joining op's
 * applier, the admitter, and a peer serving a join.
 */
import { forbidden, type HearthError } from '../../errors.ts';
import { requireCapability } from '../authority.ts';
import { speaksFor } from '../signers.ts';
import type { GroupState, NamespaceState } from '../types.ts';
import { hexOf, type SignedInvitation } from './codec.ts';

/** Throws 403 `invitation rejected: …` when the inviter may not admit into `group`. */
export function requireInviter(ns: NamespaceState, group: GroupState, inv: SignedInvitation): void {
  const reject = (why: string) => forbidden(`invitation rejected: ${why}`);
  if (!inv.inviter_account) throw reject('missing inviter_account');
  const key = hexOf(inv.invitation.inviter_identity);
  if (!speaksFor(ns, key, inv.inviter_account)) throw reject(`the inviter key ${key} does not speak for account ${inv.inviter_account}`);
  try {
    requireCapability(ns, group, inv.inviter_account, 'CAN_INVITE_MEMBERS');
  } catch (e) {
    throw reject((e as HearthError).message);
  }
}
