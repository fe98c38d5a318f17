/**
 * Whether an account may act for members in a group (admin-wire-b §11 "act for members (relay)";
 * domain.md §4.7): it is a `RelayTee` there, or holds `CAN_AUTHOR_ON_BEHALF` (bit 9) on the group or
 * on an ancestor. Bit 9 is never implied by membership or admin (authority.ts). Pure functions of
 * the governance state, so the relay's check and every applier agree; kept in governance because
 * delegation/ and contexts/ (which sits below delegation) both ask it.
 */
import { forbidden } from '../errors.ts';
import { ancestry, effectiveCapabilities } from './authority.ts';
import { CAP, type GroupState, type NamespaceState } from './types.ts';

/** The nearest group (the group itself first, then its ancestors) carrying the account's grant. */
export function authorshipGrant(ns: NamespaceState, group: GroupState, account: string): GroupState | undefined {
  return ancestry(ns, group).find((g) => {
    if (g.members[account]?.role === 'RelayTee') return true;
    const mask = effectiveCapabilities(ns, g, account);
    return mask !== undefined && (mask & CAP.CAN_AUTHOR_ON_BEHALF) !== 0;
  });
}

/** 403 when `executor` holds no grant reaching `group`, in the reference's words. */
export function requireAuthorship(ns: NamespaceState, group: GroupState, executor: string): void {
  if (!authorshipGrant(ns, group, executor)) {
    throw forbidden(
      `this node holds no authorship grant on group '${group.id}' or its ancestors, so it cannot act for a member here — an admin must grant CAN_AUTHOR_ON_BEHALF to ${executor}`,
    );
  }
}
