/**
 * Whether a delta from a peer may be taken (issue #13 items 3 and 8): signed by its origin node, the
 * origin's key speaking for a member of the context's group who may write (not a read-only role),
 * and its id re-derived from its parents and artifact. Pure checks over governance state; the
 * caller drops what fails and penalizes the peer that sent it.
 */
import { deltaIdOf, type DeltaRecord } from '../contexts/index.ts';
import { ed25519Verify } from '../crypto/keys.ts';
import { accountOfKey, type GroupState, isMember, type NamespaceState } from '../governance/index.ts';
import type { PenaltyReason } from '../network/index.ts';
import { deltaDigest, type DeltaHead } from './wire.ts';

export interface Registration {
  ns: NamespaceState;
  group: GroupState;
}

const READ_ONLY = new Set(['ReadOnly', 'ReadOnlyTee']);

/** The account a key speaks for when it is a member of the group who may write; else undefined. */
export function writerAccount(reg: Registration, key: string): string | undefined {
  const account = accountOfKey(reg.ns, key);
  if (account === undefined || !isMember(reg.ns, reg.group, account)) return undefined;
  const role = reg.group.members[account]?.role;
  return role && READ_ONLY.has(role) ? undefined : account;
}

/** The account a key speaks for when it is a member of the group (readers included). */
export function memberAccount(reg: Registration, key: string): string | undefined {
  const account = accountOfKey(reg.ns, key);
  return account !== undefined && isMember(reg.ns, reg.group, account) ? account : undefined;
}

export type Verdict = { ok: true } | { ok: false; penalty: PenaltyReason; why: string };

/** Signature and authority of a delta's head (what can be checked before its body is opened). */
export function verifyHead(reg: Registration, head: DeltaHead): Verdict {
  if (!ed25519Verify(head.origin, deltaDigest(head), Buffer.from(head.signature, 'hex'))) {
    return { ok: false, penalty: 'bad_signature', why: `delta ${head.id}: the origin's signature does not verify` };
  }
  if (writerAccount(reg, head.origin) === undefined) {
    return { ok: false, penalty: 'unauthorized', why: `delta ${head.id}: origin ${head.origin} speaks for no member of group ${reg.group.id} who may write` };
  }
  return { ok: true };
}

/** The whole record: its head, and its id against its content. */
export function verifyRecord(reg: Registration, r: DeltaRecord): Verdict {
  const head = verifyHead(reg, { contextId: r.contextId, id: r.id, parents: r.parents, origin: r.origin!, author: r.author, hlc: r.hlc!, signature: r.signature! });
  if (!head.ok) return head;
  if (deltaIdOf(r.parents, Buffer.from(r.artifact, 'hex')) !== r.id) return { ok: false, penalty: 'invalid_message', why: `delta ${r.id}: the id does not match its parents and artifact` };
  return { ok: true };
}
