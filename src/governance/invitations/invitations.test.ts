/**
 * The join applier against a state from genesis, with accounts a single node cannot play: a second
 * account joins with A's invitation (row with the invited role), single use (409, for the same account
 * and for another one: admission.test.ts has the other admission rules), expiry
 * checked at the op's timestamp (409), an inviter without CAN_INVITE_MEMBERS (403), tampering (400).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { namespaceIdOf } from '../../crypto/ids.ts';
import { ed25519Sign, generateKeyPair, privateKeyObject } from '../../crypto/keys.ts';
import { HearthError } from '../../errors.ts';
import { emptyNamespace } from '../genesis.ts';
import { createAppliers } from '../ops.ts';
import type { GovOp, NamespaceState } from '../types.ts';
import { invitationBorsh, type SignedInvitation } from './codec.ts';
import { INVITATION_OPS } from './ops.ts';

const registry = createAppliers();
const A = 'a1'.repeat(32);
const B = 'b2'.repeat(32);
const C = 'c3'.repeat(32);
const APP = 'ee'.repeat(32);
const key = generateKeyPair('ed25519');

function apply(ns: NamespaceState, account: string, groupId: string, kind: string, body: Record<string, unknown>, timestampMs = 5_000) {
  const draft = structuredClone(ns);
  const op = { namespaceId: ns.id, groupId, account, kind, body, timestampMs, seq: '1', parents: [], signer: '', nonce: '1', id: '', signature: '' } as GovOp;
  registry.get(kind)({ ns: draft, op, emit: () => undefined });
  return draft;
}

function kindOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof HearthError) return e.kind;
    throw e;
  }
  return 'ok';
}

function invitation(groupId: string, inviterAccount: string, expiresAt = 100, role = 1): SignedInvitation {
  const body = {
    inviter_identity: [...Buffer.from(key.publicKey, 'hex')],
    group_id: [...Buffer.from(groupId, 'hex')],
    expiration_timestamp: expiresAt,
    secret_salt: Array(32).fill(1),
    invited_role: role,
    admitters: [inviterAccount],
  };
  const sig = ed25519Sign(privateKeyObject(key.privateKey), createHash('sha256').update(invitationBorsh(body)).digest());
  return { invitation: body, inviter_signature: sig, inviter_account: inviterAccount };
}

describe('invitation.memberJoined', () => {
  const salt = '11'.repeat(32);
  const nsId = namespaceIdOf(A, salt);
  const founded = apply(emptyNamespace(nsId, A, { salt, applicationId: APP, appKey: APP }, 1), A, nsId, 'namespace.created', { salt, applicationId: APP, appKey: APP });
  // the inviter's signing key speaks for A (signers.ts): bound as a credential-carrying op would bind it
  const genesis: NamespaceState = { ...founded, signers: { [key.publicKey]: { account: A, deviceId: 'dd'.repeat(32) } } };
  const join = (ns: NamespaceState, who: string, inv: SignedInvitation, at = 5_000) =>
    apply(ns, who, nsId, INVITATION_OPS.joined, { invitation: inv as unknown as Record<string, unknown> }, at);

  it('adds the joiner with the invited role; a second use, by the same account or another, is 409', () => {
    const inv = invitation(nsId, A, 100, 2);
    const joined = join(genesis, B, inv);
    expect(joined.groups[nsId]!.members[B]).toMatchObject({ role: 'ReadOnly', joinedAt: 5_000 });
    expect(kindOf(() => join(joined, B, inv))).toBe('conflict');
    const left = structuredClone(joined);
    delete left.groups[nsId]!.members[B];
    expect(kindOf(() => join(left, B, inv))).toBe('conflict'); // consumed, even after leaving
    expect(kindOf(() => join(joined, C, inv))).toBe('conflict'); // single use (issue 23 §3)
  });

  it('checks expiry at the op timestamp (409), the inviter authority (403) and the signature (400)', () => {
    expect(kindOf(() => join(genesis, B, invitation(nsId, A, 4), 5_000))).toBe('conflict');
    expect(kindOf(() => join(genesis, B, invitation(nsId, C)))).toBe('forbidden');
    // the key speaks for A only: an invitation it signs naming another account (even an admin) is refused
    const admins = structuredClone(genesis);
    admins.groups[nsId]!.members[C] = { role: 'Admin', autoFollow: { contexts: true, subgroups: false }, metadata: null, joinedAt: 1 };
    expect(() => join(admins, B, invitation(nsId, C))).toThrow(/does not speak for account/);
    const inv = invitation(nsId, A);
    expect(kindOf(() => join(genesis, B, { ...inv, invitation: { ...inv.invitation, invited_role: 0 } }))).toBe('bad_request');
    expect(kindOf(() => join(genesis, B, { ...inv, inviter_account: undefined }))).toBe('bad_request');
  });
});
