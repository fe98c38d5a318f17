/**
 * Removals that hold and invitations that can be withdrawn (issue 23 §3), at the applier level and
 * between governance nodes: a revoked invitation admits nobody; an invitation admits one account;
 * an account removed by an admin comes back only with an invitation minted after its removal (by
 * the removal count carried in the signed salt), not through a device key of its own under another
 * account, not into a subgroup of the group it was removed from; an admin's re-add lifts the ban.
 * Revocation needs invite authority; a forged revoke has no effect; a join and a concurrent revoke
 * settle the same way on every node.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { namespaceIdOf } from '../../crypto/ids.ts';
import { ed25519Sign, generateKeyPair, privateKeyObject } from '../../crypto/keys.ts';
import { emptyNamespace } from '../genesis.ts';
import { MEMBER_OPS } from '../groups/members-ops.ts';
import { applyOp, forgedOp, govNode, pull, refusalOf, stateText, TEST_APP } from '../testkit.ts';
import type { NamespaceState } from '../types.ts';
import { invitationId, issuedAtEpoch, mintSalt, removedFrom } from './admission.ts';
import { invitationBorsh, type SignedInvitation } from './codec.ts';
import { INVITATION_OPS } from './ops.ts';

const A = 'a1'.repeat(32);
const B = 'b2'.repeat(32);
const C = 'c3'.repeat(32);
const M = 'd4'.repeat(32);
const APP = 'ee'.repeat(32);
const inviterKey = generateKeyPair('ed25519');
const bKey = generateKeyPair('ed25519');

function invitation(groupId: string, epoch: number, salt?: number[]): SignedInvitation {
  const body = {
    inviter_identity: [...Buffer.from(inviterKey.publicKey, 'hex')],
    group_id: [...Buffer.from(groupId, 'hex')],
    expiration_timestamp: 1_000_000,
    secret_salt: salt ?? mintSalt(epoch),
    invited_role: 1,
    admitters: [A],
  };
  const sig = ed25519Sign(privateKeyObject(inviterKey.privateKey), createHash('sha256').update(invitationBorsh(body)).digest());
  return { invitation: body, inviter_signature: sig, inviter_account: A };
}

const saltHex = '11'.repeat(32);
const nsId = namespaceIdOf(A, saltHex);
const founded = applyOp(emptyNamespace(nsId, A, { salt: saltHex, applicationId: APP, appKey: APP }, 1), nsId, 'namespace.created', { salt: saltHex, applicationId: APP, appKey: APP }, { account: A });
const row = { role: 'Member' as const, autoFollow: { contexts: true, subgroups: false }, metadata: null, joinedAt: 1 };
/** A (admin) with its inviter key bound; M a plain member (no invite authority); B's node key bound to B */
const genesis: NamespaceState = {
  ...founded,
  signers: { [inviterKey.publicKey]: { account: A, deviceId: 'dd'.repeat(32) }, [bKey.publicKey]: { account: B, deviceId: 'de'.repeat(32) } },
};
genesis.groups[nsId]!.members[M] = { ...row };

const join = (ns: NamespaceState, who: string, inv: SignedInvitation, signer = '', groupId = nsId) =>
  applyOp(ns, groupId, INVITATION_OPS.joined, { invitation: inv as unknown as Record<string, unknown> }, { account: who, signer, timestampMs: 5_000 });
const revoke = (ns: NamespaceState, by: string, id: unknown) => applyOp(ns, nsId, INVITATION_OPS.revoked, { invitationId: id }, { account: by });
const remove = (ns: NamespaceState, who: string, groupId = nsId) => applyOp(ns, groupId, MEMBER_OPS.removed, { members: [who] }, { account: A });

describe('invitation admission rules', () => {
  it('the removal count rides in the signed salt; a salt without the marker counts as 0', () => {
    expect(issuedAtEpoch(invitation(nsId, 7))).toBe(7);
    expect(issuedAtEpoch(invitation(nsId, 0, Array(32).fill(1)))).toBe(0);
    expect(mintSalt(3)).toHaveLength(32);
    expect(mintSalt(3)).not.toEqual(mintSalt(3)); // still random past the marker
  });

  it('an invitation admits one account: another account replaying it is refused (409)', () => {
    const inv = invitation(nsId, 0);
    const joined = join(genesis, B, inv);
    expect(joined.groups[nsId]!.members[B]?.role).toBe('Member');
    expect(refusalOf(() => join(joined, C, inv))).toMatch(/^conflict: invitation already used/);
  });

  it('a revoked invitation admits nobody; revoking needs invite authority, a valid id, and happens once', () => {
    const inv = invitation(nsId, 0);
    const id = invitationId(inv);
    const revoked = revoke(genesis, A, id);
    expect(revoked.groups[nsId]!.revokedInvitations?.[id]).toMatchObject({ by: A });
    expect(refusalOf(() => join(revoked, B, inv))).toBe('forbidden: invitation rejected: the invitation was revoked');
    expect(refusalOf(() => revoke(genesis, M, id))).toMatch(/^forbidden: /); // a member without CAN_INVITE_MEMBERS
    expect(refusalOf(() => revoke(genesis, C, id))).toMatch(/^forbidden: /); // not a member at all
    for (const bad of ['zz'.repeat(32), id.toUpperCase(), id.slice(2), 42, null]) expect(refusalOf(() => revoke(genesis, A, bad))).toMatch(/^bad_request: invitationId/);
    expect(refusalOf(() => revoke(revoked, A, id))).toMatch(/^conflict: .*already revoked/);
    // a member given CAN_INVITE_MEMBERS may revoke
    const granted = structuredClone(genesis);
    granted.groups[nsId]!.members[M]!.capabilities = 1 << 1;
    expect(refusalOf(() => revoke(granted, M, id))).toBe('ok');
  });

  it('a removed account comes back only with an invitation minted after its removal', () => {
    const first = invitation(nsId, 0);
    const spare = invitation(nsId, 0); // minted before the removal, never used
    const inB = join(genesis, B, first, bKey.publicKey);
    const out = remove(inB, B);
    expect(out.removalEpoch).toBe(1);
    expect(out.groups[nsId]!.removedMembers?.[B]).toBe(1);
    expect(removedFrom(out, out.groups[nsId]!, B)?.id).toBe(nsId);
    expect(refusalOf(() => join(out, B, first, bKey.publicKey))).toMatch(/^conflict: /); // spent by B itself
    expect(refusalOf(() => join(out, B, spare, bKey.publicKey))).toMatch(/^forbidden: invitation rejected: account .* was removed from group/);
    // B's node key, claiming a fresh account, is still B's identity
    expect(refusalOf(() => join(out, C, spare, bKey.publicKey))).toMatch(/account b2b2.* was removed/);
    // another account that was never removed may use the spare invitation
    expect(refusalOf(() => join(out, C, spare))).toBe('ok');
    // re-invited after the removal: back in, and the ban record is gone
    const back = join(out, B, invitation(nsId, 1), bKey.publicKey);
    expect(back.groups[nsId]!.members[B]).toBeDefined();
    expect(back.groups[nsId]!.removedMembers?.[B]).toBeUndefined();
    expect(removedFrom(back, back.groups[nsId]!, B)).toBeUndefined();
  });

  it('the ban covers subgroups of the group the account was removed from; an admin re-add lifts it', () => {
    const sub = 'f0'.repeat(32);
    const withSub = structuredClone(genesis);
    withSub.groups[sub] = { ...structuredClone(withSub.groups[nsId]!), id: sub, parentId: nsId, members: { [A]: { ...row, role: 'Admin' } }, contexts: {} };
    const out = remove(join(withSub, B, invitation(nsId, 0)), B);
    expect(refusalOf(() => join(out, B, invitation(sub, 0), '', sub))).toMatch(/removed from group '.*' after this invitation/);
    expect(refusalOf(() => join(out, B, invitation(sub, 1), '', sub))).toBe('ok');
    const readded = applyOp(out, nsId, MEMBER_OPS.added, { members: [{ account: B, role: 'Member' }] }, { account: A });
    expect(readded.groups[nsId]!.removedMembers?.[B]).toBeUndefined();
  });

  it('a forged revoke (a key that speaks for no one) has no effect on any node', async () => {
    const a = await govNode();
    const ns = await a.namespaces.found({ applicationId: TEST_APP });
    const { invitation: inv } = await a.invitations.invite(ns.id, {});
    const id = invitationId(inv);
    // stored without effect (docs/governance.md: an op the fold refuses stays in the log, on every node alike)
    await a.governance.ingest(ns.id, [forgedOp(a.governance, ns.id, a.identity.accountId, INVITATION_OPS.revoked, { invitationId: id })]);
    expect(a.governance.namespace(ns.id)!.groups[ns.id]!.revokedInvitations?.[id]).toBeUndefined();
    const b = await govNode(1_700_000_100_000);
    await pull(a, b, ns.id);
    await b.invitations.join(inv, ns.id);
    expect(b.governance.namespace(ns.id)!.groups[ns.id]!.members[b.identity.accountId]).toBeDefined();
  });

  it('between nodes: a revoked invitation is refused by the joiner’s own node, and a join racing a revoke settles alike everywhere', async () => {
    const a = await govNode(1_700_000_000_000);
    const b = await govNode(1_700_000_100_000);
    const c = await govNode(1_700_000_200_000);
    const ns = await a.namespaces.found({ applicationId: TEST_APP });
    // B: revoked before it joins, known to B's node through the log
    const { invitation: revokedInv } = await a.invitations.invite(ns.id, {});
    await a.invitations.revoke(ns.id, { invitation: revokedInv });
    await pull(a, b, ns.id);
    await expect(b.invitations.join(revokedInv, ns.id)).rejects.toMatchObject({ kind: 'forbidden', message: expect.stringMatching(/revoked/) });
    // the same answer again: no second op
    const heads = a.governance.heads(ns.id);
    expect(await a.invitations.revoke(ns.id, { invitationId: invitationId(revokedInv) })).toMatchObject({ revoked: true });
    expect(a.governance.heads(ns.id)).toEqual(heads);
    // C joins while A, not yet aware, revokes the same invitation: one total order decides for both
    const { invitation: raced } = await a.invitations.invite(ns.id, {});
    await pull(a, c, ns.id);
    await c.invitations.join(raced, ns.id);
    const { op: revokeOp } = await a.governance.submit(ns.id, ns.id, INVITATION_OPS.revoked, { invitationId: invitationId(raced) });
    await pull(c, a, ns.id);
    await pull(a, c, ns.id);
    expect(stateText(a, ns.id)).toBe(stateText(c, ns.id));
    const joinOp = (await c.governance.ops(ns.id)).find((o) => o.kind === INVITATION_OPS.joined)!;
    const joinFirst = BigInt(joinOp.seq) < BigInt(revokeOp.seq) || (joinOp.seq === revokeOp.seq && joinOp.id < revokeOp.id);
    expect(a.governance.namespace(ns.id)!.groups[ns.id]!.members[c.identity.accountId] !== undefined).toBe(joinFirst);
  });

  it('the revoke service refuses what is not a revocation it may make, naming the problem', async () => {
    const a = await govNode();
    const m = await govNode(1_700_000_100_000);
    const ns = await a.namespaces.found({ applicationId: TEST_APP });
    const sub = await a.groups.create({ parentGroupId: ns.id, applicationId: TEST_APP, name: 'team' });
    const { invitation: inv } = await a.invitations.invite(ns.id, {});
    const id = invitationId(inv);
    const kind = (p: Promise<unknown>) => p.then(() => 'ok', (e: { kind?: string; message?: string }) => `${e.kind}: ${e.message}`);
    expect(await kind(a.invitations.revoke(ns.id, {}))).toMatch(/^bad_request: give the invitation or its invitationId/);
    expect(await kind(a.invitations.revoke(ns.id, { invitation: { nope: true } }))).toMatch(/^bad_request: invalid invitation/);
    expect(await kind(a.invitations.revoke(ns.id, { invitation: 'x' }))).toMatch(/^bad_request: /);
    expect(await kind(a.invitations.revoke(ns.id, { invitation: inv, invitationId: 'ab'.repeat(32) }))).toMatch(/^bad_request: invitationId does not match/);
    expect(await kind(a.invitations.revoke(sub, { invitation: inv }))).toMatch(/^bad_request: the invitation is to group/);
    expect(await kind(a.invitations.revoke('cd'.repeat(32), { invitationId: id }))).toMatch(/^not_found: /);
    // a plain member of the namespace (no CAN_INVITE_MEMBERS) may not revoke
    await pull(a, m, ns.id);
    await m.invitations.join(inv, ns.id);
    await pull(m, a, ns.id);
    const { invitation: other } = await a.invitations.invite(ns.id, {});
    expect(await kind(m.invitations.revoke(ns.id, { invitation: other }))).toMatch(/^forbidden: /);
    expect(a.governance.namespace(ns.id)!.groups[ns.id]!.revokedInvitations).toBeUndefined();
  });

  it('invitations this node mints carry the namespace’s current removal count', async () => {
    const a = await govNode();
    const b = await govNode(1_700_000_100_000);
    const ns = await a.namespaces.found({ applicationId: TEST_APP });
    const { invitation: first } = await a.invitations.invite(ns.id, {});
    const { invitation: spare } = await a.invitations.invite(ns.id, {});
    expect(issuedAtEpoch(first)).toBe(0);
    await pull(a, b, ns.id);
    await b.invitations.join(first, ns.id);
    await pull(b, a, ns.id);
    await a.members.removeMembers(ns.id, [b.identity.accountId]);
    const { invitation: second } = await a.invitations.invite(ns.id, {});
    expect(issuedAtEpoch(second)).toBe(1);
    await pull(a, b, ns.id);
    await expect(b.invitations.join(first, ns.id)).rejects.toMatchObject({ kind: 'conflict' }); // spent by B itself
    await expect(b.invitations.join(spare, ns.id)).rejects.toMatchObject({ kind: 'forbidden', message: expect.stringMatching(/was removed from group/) });
    await b.invitations.join(second, ns.id);
    expect(b.governance.namespace(ns.id)!.groups[ns.id]!.members[b.identity.accountId]).toBeDefined();
    await pull(b, a, ns.id);
    expect(a.governance.namespace(ns.id)!.groups[ns.id]!.members[b.identity.accountId]).toBeDefined();
  });
});
