/**
 * Whether a peer node may act for a member of a group (domain.md §5.2: blobs go only to the
 * members of the context naming them): the peer's node key must speak for an account (signers.ts)
 * that is a member of the group, directly or through inheritance (authority.ts).
 */
import { isMember } from './authority.ts';
import { accountOfKey } from './signers.ts';
import type { GroupState, NamespaceState } from './types.ts';

export function peerSpeaksForMember(ns: NamespaceState, group: GroupState, peerKey: string): boolean {
  const account = accountOfKey(ns, peerKey);
  return account !== undefined && isMember(ns, group, account);
}
