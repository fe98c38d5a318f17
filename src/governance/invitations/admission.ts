/**
 * Whether an invitation may still admit an account (issue 23 §3; docs/security.md "Invitations and
 * removals"). Beyond the inviter's signature, expiry and authority (inviter.ts), every node applying
 * a join — and every peer asked to serve one — checks, against the namespace's governance state:
 *
 * - **revocation**: a member with invite authority revoked the invitation (`invitation.revoked` op,
 *   in the namespace's log, so every member node refuses it alike);
 * - **single use**: an invitation admits one account; once consumed it is spent for everyone else
 *   (the reference treats an invitation as a bearer credential and says nothing of reuse; a
 *   credential that can be replayed by whoever saw it is what the attacker used);
 * - **removal ban**: an account removed from the group (or an ancestor) by an admin may come back
 *   only with an invitation issued after the removal. "After" is decided by a counter, not by
 *   clocks: the namespace counts removals (`removalEpoch`, advanced in the log's total order, so the
 *   same on every node), a removal records the count it reached for the removed account, and an
 *   invitation carries, inside its signed `secret_salt`, the count its inviter's node had applied
 *   when it minted it. An invitation issued by a node that had not applied the removal carries a
 *   lower count and is refused. The ban also covers a join signed by a key that was bound to the
 *   removed account (its device), whichever account the join claims.
 *
 * Pure functions over the state; appliers, the join service and the replicator call them.
 */
import { randomBytes } from 'node:crypto';
import { conflict, forbidden } from '../../errors.ts';
import { ancestry, isMember } from '../authority.ts';
import type { GroupState, NamespaceState } from '../types.ts';
import { invitationHash, type SignedInvitation } from './codec.ts';

/** The first bytes of a salt that carries a removal count ("hrv1"); the rest are random. */
const SALT_MAGIC = Buffer.from('hrv1', 'ascii');
const EPOCH_BYTES = 8;

/** A fresh `secret_salt` carrying the namespace's removal count: magic ‖ u64 BE count ‖ 20 random bytes. */
export function mintSalt(epoch: number): number[] {
  const count = Buffer.alloc(EPOCH_BYTES);
  count.writeBigUInt64BE(BigInt(epoch));
  return [...Buffer.concat([SALT_MAGIC, count, randomBytes(32 - SALT_MAGIC.length - EPOCH_BYTES)])];
}

/**
 * The removal count an invitation was minted at; 0 for a salt without the marker (minted before
 * this rule, or elsewhere): such an invitation readmits no removed account.
 */
export function issuedAtEpoch(inv: SignedInvitation): number {
  const salt = Buffer.from(inv.invitation.secret_salt);
  if (!salt.subarray(0, SALT_MAGIC.length).equals(SALT_MAGIC)) return 0;
  const n = salt.readBigUInt64BE(SALT_MAGIC.length);
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
}

/** The invitation's id: hex SHA-256 of its signed body (what single use and revocation key on). */
export const invitationId = (inv: SignedInvitation): string => invitationHash(inv.invitation).toString('hex');

/** Records an admin's removal of `account` from `group` (called by the removal applier, in fold order). */
export function recordRemoval(ns: NamespaceState, group: GroupState, account: string): void {
  ns.removalEpoch = (ns.removalEpoch ?? 0) + 1;
  (group.removedMembers ??= {})[account] = ns.removalEpoch;
}

/** An admin added the account back explicitly, or it joined with a newer invitation: the ban is lifted. */
export function clearRemoval(group: GroupState, account: string): void {
  if (group.removedMembers?.[account] !== undefined) delete group.removedMembers[account];
}

/**
 * The group (the context's, or an ancestor) an admin removed `account` from, when the account is no
 * longer a member because of it: what a removed node reports (sync status `removed`) and why it
 * refuses writes to the group's contexts.
 */
export function removedFrom(ns: NamespaceState, group: GroupState, account: string): GroupState | undefined {
  if (isMember(ns, group, account)) return undefined;
  return ancestry(ns, group).find((g) => g.removedMembers?.[account] !== undefined);
}

/** Accounts a signing key was ever bound to in the namespace (its node's, or a device binding, revoked or not). */
function accountsOfKey(ns: NamespaceState, key: string): string[] {
  const out = new Set<string>();
  const bound = ns.signers?.[key];
  if (bound) out.add(bound.account);
  for (const [account, devices] of Object.entries(ns.deviceBindings ?? {})) if (Object.values(devices).some((d) => d.signingKey === key)) out.add(account);
  return [...out];
}

/** Throws 403 when the invitation was revoked in `group`. */
export function requireNotRevoked(group: GroupState, inv: SignedInvitation): void {
  if (group.revokedInvitations?.[invitationId(inv)]) throw forbidden('invitation rejected: the invitation was revoked');
}

/** Throws 409 when the invitation was consumed by an account other than `account` (undefined: anyone). */
export function requireUnused(group: GroupState, inv: SignedInvitation, account?: string): void {
  const users = group.consumedInvitations?.[invitationId(inv)] ?? [];
  if (users.some((a) => a !== account)) throw conflict('invitation already used: an invitation admits one account');
}

/**
 * Throws 403 when `account`, or an account `signer` was bound to, was removed from the group or an
 * ancestor after this invitation was issued.
 */
export function requireNotBanned(ns: NamespaceState, group: GroupState, inv: SignedInvitation, account: string | undefined, signer?: string): void {
  const issued = issuedAtEpoch(inv);
  const who = new Set([...(account !== undefined ? [account] : []), ...(signer ? accountsOfKey(ns, signer) : [])]);
  for (const g of ancestry(ns, group)) {
    for (const a of who) {
      const removedAt = g.removedMembers?.[a];
      if (removedAt !== undefined && issued < removedAt) {
        throw forbidden(`invitation rejected: account ${a} was removed from group '${g.id}' after this invitation was issued; only an invitation issued after the removal readmits it`);
      }
    }
  }
}

/** Every admission rule for `account` (joining with `signer`): revocation, single use, removal ban. */
export function requireAdmissible(ns: NamespaceState, group: GroupState, inv: SignedInvitation, account: string, signer?: string): void {
  requireNotRevoked(group, inv);
  requireUnused(group, inv, account);
  requireNotBanned(ns, group, inv, account, signer);
}
