/**
 * The replicated governance log without a network: ops moved between nodes by hand, in every
 * order, must fold to the same state on each; ops that cannot be taken are reported, never thrown.
 */
import { describe, expect, it } from 'vitest';
import { generateKeyPair, ed25519Sign, privateKeyObject } from '../crypto/keys.ts';
import { orderKey } from './dag.ts';
import { opIdOf } from './log.ts';
import { forgedOp, govNode, pair, pull, stateText, TEST_APP, type GovNode } from './testkit.ts';
import type { GovOp } from './types.ts';

const newOps = async (from: GovNode, nsId: string, since: string[]): Promise<GovOp[]> => from.governance.lacking(nsId, since);

describe('governance log replication', () => {
  it('a joiner folds the founder’s log and the founder folds the join', async () => {
    const { a, b, nsId } = await pair();
    expect(a.members.members(nsId).map((m) => m.identity).sort()).toEqual([a.identity.accountId, b.identity.accountId].sort());
    expect(stateText(a, nsId)).toBe(stateText(b, nsId));
    expect(a.governance.heads(nsId)).toEqual(b.governance.heads(nsId));
  });

  it('concurrent ops on two nodes converge whatever order they arrive in', async () => {
    const { a, b, nsId } = await pair();
    const c = await govNode(1_700_000_001_000);
    await pull(a, c, nsId);
    const base = a.governance.heads(nsId);
    // concurrent: A adds a member and sets group metadata; B names itself
    await a.members.addMembers(nsId, [{ identity: 'c1'.repeat(32), role: 'Member' }]);
    await a.settings.setMetadata(nsId, { target: 'group' }, { name: 'alpha', data: { k: 'a' } });
    await b.settings.setMetadata(nsId, { target: 'member', account: b.identity.accountId }, { name: 'bee', data: {} });
    const fromA = await newOps(a, nsId, base);
    const fromB = await newOps(b, nsId, base);
    expect(fromA).toHaveLength(2);
    expect(fromB).toHaveLength(1);
    // A gets B's op, B gets A's; C gets them interleaved, child before parent
    expect((await a.governance.ingest(nsId, fromB)).added).toHaveLength(1);
    expect((await b.governance.ingest(nsId, fromA)).added).toHaveLength(2);
    const first = await c.governance.ingest(nsId, [fromA[1]!, fromB[0]!]);
    expect(first.waiting.map((o) => o.id)).toEqual([fromA[1]!.id]);
    expect(first.missing).toEqual([fromA[0]!.id]);
    await c.governance.ingest(nsId, [fromA[0]!, fromA[1]!]);
    expect(stateText(b, nsId)).toBe(stateText(a, nsId));
    expect(stateText(c, nsId)).toBe(stateText(a, nsId));
    expect(a.governance.heads(nsId)).toHaveLength(2);
    // the next local op merges both heads
    await b.settings.setMetadata(nsId, { target: 'member', account: b.identity.accountId }, { name: 'bee2', data: {} });
    expect(b.governance.heads(nsId)).toHaveLength(1);
    await pull(b, a, nsId);
    expect(stateText(a, nsId)).toBe(stateText(b, nsId));
  });

  it('a removal concurrent with the removed member’s op resolves the same on every node', async () => {
    const { a, b, nsId } = await pair();
    const base = a.governance.heads(nsId);
    await a.members.removeMembers(nsId, [b.identity.accountId]);
    await b.settings.setMetadata(nsId, { target: 'member', account: b.identity.accountId }, { name: 'late', data: {} });
    const fromA = await newOps(a, nsId, base);
    const fromB = await newOps(b, nsId, base);
    const atA = await a.governance.ingest(nsId, fromB);
    const atB = await b.governance.ingest(nsId, fromA);
    expect(stateText(a, nsId)).toBe(stateText(b, nsId));
    expect(a.governance.stateOf(nsId)!.groups[nsId]!.members[b.identity.accountId]).toBeUndefined();
    // the op that sorts second lost on both nodes or on neither
    const removalFirst = `${fromA[0]!.seq}/${fromA[0]!.id}` < `${fromB[0]!.seq}/${fromB[0]!.id}`;
    expect(atA.rejected.length).toBe(removalFirst ? 1 : 0);
    expect(atB.added).toHaveLength(1);
  });

  it('reports forged, tampered and out-of-place ops instead of taking them', async () => {
    const { a, b, nsId } = await pair();
    await a.settings.setMetadata(nsId, { target: 'group' }, { name: 'x', data: {} });
    const [op] = await newOps(a, nsId, b.governance.heads(nsId));
    const tampered = { ...op!, body: { ...op!.body, name: 'y' } };
    const badSig = { ...op!, signature: '00'.repeat(64) };
    const { id: _id, signature: _s, ...unsigned } = op!;
    const wrongSeqUnsigned = { ...unsigned, seq: '99' };
    const wrongSeq = { ...wrongSeqUnsigned, id: opIdOf(wrongSeqUnsigned), signature: '' };
    wrongSeq.signature = a.identity.sign(Buffer.from(wrongSeq.id, 'hex'));
    const reasons: string[] = [];
    for (const bad of [tampered, badSig, wrongSeq, { ...op!, namespaceId: 'ff'.repeat(32) }]) {
      const got = await b.governance.ingest(nsId, [bad]);
      expect(got.added).toEqual([]);
      reasons.push(...got.refused.map((r) => r.reason));
    }
    expect(reasons).toEqual([
      'op id does not match its content',
      'op signature is invalid',
      'op seq 99 does not follow its parents',
      expect.stringContaining('op belongs to namespace'),
    ]);
    // a bad copy first does not keep the good one out
    expect((await b.governance.ingest(nsId, [badSig, op!])).added.map((o) => o.id)).toEqual([op!.id]);
  });

  it('keeps an op from a key that speaks for no member without effect', async () => {
    const { a, b, nsId } = await pair();
    const stranger = generateKeyPair('ed25519');
    const before = stateText(b, nsId);
    const unsigned = {
      namespaceId: nsId,
      groupId: nsId,
      seq: (BigInt(b.governance.stateOf(nsId)!.seq) + 1n).toString(),
      parents: b.governance.heads(nsId),
      signer: stranger.publicKey,
      account: a.identity.accountId, // claims the founder's account
      nonce: '999',
      kind: 'group.metadata.set',
      body: { target: 'group', name: 'hijacked', data: {} },
      timestampMs: 1,
    };
    const id = opIdOf(unsigned);
    const forged = { ...unsigned, id, signature: ed25519Sign(privateKeyObject(stranger.privateKey), Buffer.from(id, 'hex')) };
    const got = await b.governance.ingest(nsId, [forged]);
    expect(got.rejected[0]?.reason).toMatch(/does not speak for account/);
    expect(stateText(b, nsId).replace(/"heads":\[[^\]]*\]|"seq":"\d+"/g, '')).toBe(before.replace(/"heads":\[[^\]]*\]|"seq":"\d+"/g, ''));
    // and a later op from A folds the same on both nodes
    await a.governance.ingest(nsId, [forged]);
    expect(stateText(a, nsId)).toBe(stateText(b, nsId));
  });

  it('survives a restart: heads, state and later ingests', async () => {
    const { a, b, nsId } = await pair();
    const b2 = await b.restart();
    expect(stateText(b2, nsId)).toBe(stateText(b, nsId));
    expect(b2.governance.heads(nsId)).toEqual(b.governance.heads(nsId));
    await a.members.addMembers(nsId, [{ identity: 'c2'.repeat(32), role: 'Member' }]);
    await pull(a, b2, nsId);
    expect(stateText(b2, nsId)).toBe(stateText(a, nsId));
  });

  it('a deletion replicates as a tombstone: the namespace is unlisted and later ops are refused', async () => {
    const { a, b, nsId } = await pair();
    await a.manage.delete(nsId);
    await pull(a, b, nsId);
    expect(b.governance.namespace(nsId)).toBeUndefined();
    expect(b.governance.stateOf(nsId)?.deletedAt).toBeDefined();
    await expect(b.members.setRole(nsId, b.identity.accountId, 'Admin')).rejects.toMatchObject({ kind: 'not_found' });
  });
});

// issue #23 section 6: a node restarted on honest code keeps no governance view forged before
describe('re-verification of the stored log on start', () => {
  it('an honest log restarts unchanged, with nothing to report', async () => {
    const a = await govNode();
    const ns = await a.namespaces.found({ applicationId: TEST_APP, name: 'team' });
    await a.settings.setMetadata(ns.id, { target: 'group' }, { name: 'honest', data: {} });
    const b = await a.restart();
    expect(b.verified).toEqual({ droppedOps: [], droppedNamespaces: [], rederived: [] });
    expect(stateText(b, ns.id)).toBe(stateText(a, ns.id));
  });

  it('drops forged ops written straight into the store, their descendants and the state they forged', async () => {
    const a = await govNode();
    const ns = await a.namespaces.found({ applicationId: TEST_APP, name: 'team' });
    await a.settings.setMetadata(ns.id, { target: 'group' }, { name: 'honest', data: {} });
    // what honest code makes of the same log: the stranger's signed op is kept, without effect
    const unauthorized = forgedOp(a.governance, ns.id, a.identity.accountId, 'metadata.set', { target: 'group', name: 'owned', data: {} });
    const honest = await govNode(1_700_000_000_700);
    await pull(a, honest, ns.id);
    expect((await honest.governance.ingest(ns.id, [unauthorized])).rejected).toHaveLength(1);

    // the forged code: the unauthorized op, one with a broken signature, an op signed by this node
    // that descends from the broken one, and a state showing the stranger's effect
    const broken = { ...forgedOp(a.governance, ns.id, a.identity.accountId, 'metadata.set', { target: 'group', name: 'x', data: {} }), signature: '00'.repeat(64) };
    const childUnsigned = { ...unauthorized, parents: [broken.id], seq: (BigInt(broken.seq) + 1n).toString(), signer: a.identity.publicKey, nonce: '99', body: { target: 'group', name: 'child', data: {} } };
    delete (childUnsigned as Partial<GovOp>).id;
    delete (childUnsigned as Partial<GovOp>).signature;
    const childId = opIdOf(childUnsigned as never);
    const child = { ...childUnsigned, id: childId, signature: a.identity.sign(Buffer.from(childId, 'hex')) } as GovOp;
    const opSpace = a.store.space<GovOp>('gov.ops');
    for (const op of [unauthorized, broken, child]) await opSpace.put(`${ns.id}/${orderKey(BigInt(op.seq), op.id)}`, op);
    const forgedState = structuredClone(a.governance.stateOf(ns.id)!);
    forgedState.groups[ns.id]!.metadata = { name: 'owned', data: {} } as never;
    forgedState.heads = [child.id];
    await a.store.space('gov.state').put(ns.id, forgedState);
    // and a namespace with no verifiable log at all
    const ghost = 'e'.repeat(64);
    await a.store.space('gov.state').put(ghost, { ...forgedState, id: ghost });

    const b = await a.restart();
    // in fold order: the broken op (seq n) before its child (seq n + 1)
    expect(b.verified.droppedOps.map((d) => [d.opId, d.reason])).toEqual([
      [broken.id, 'op signature is invalid'],
      [child.id, 'a parent is missing (dropped, or never stored)'],
    ]);
    expect(b.verified.rederived).toEqual([ns.id]);
    expect(b.verified.droppedNamespaces).toEqual([ghost]);
    expect(b.governance.stateOf(ghost)).toBeUndefined();
    expect(b.governance.namespace(ns.id)!.groups[ns.id]!.metadata!.name).toBe('honest');
    expect(stateText(b, ns.id)).toBe(stateText(honest, ns.id));
    const kept = (await b.governance.ops(ns.id)).map((o) => o.id);
    expect(kept).toContain(unauthorized.id);
    expect(kept).not.toContain(broken.id);
    expect(kept).not.toContain(child.id);
    // written back: the next start finds nothing to change
    expect((await b.restart()).verified).toEqual({ droppedOps: [], droppedNamespaces: [], rederived: [] });
  });
});
