/**
 * The root guard and the owner ops through a real Governance on a MemoryStore: the counter
 * sequence (0 → 1 → 2, surviving a reload), and each typed refusal — empty proof 400, absent proof
 * on a non-holder 403, a stranger's root 403, stale counter 409, mismatched/invalid proof 400.
 */
import { generateKeyPairSync } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { NodeIdentity } from '../../identity/identity.ts';
import { accountIdOf } from '../../crypto/ids.ts';
import { ed25519Sign, generateKeyPair, privateKeyObject } from '../../crypto/keys.ts';
import { HearthError } from '../../errors.ts';
import { EventBus } from '../../bus.ts';
import { MemoryStore } from '../../store/memory.ts';
import { GroupService } from '../groups/service.ts';
import { Governance } from '../log.ts';
import { NamespaceService } from '../namespaces/service.ts';
import { createAppliers } from '../ops.ts';
import { decodeSignedOwnerOp, encodeSignedOwnerOp, opDigestOf, OWNER_OP_KIND, rootGuard, signOwnerOp, verifyRootProof } from '../root-guard.ts';
import { adminChangedOpBorsh, OWNER_OPS, transferOwnershipOpBorsh } from './ops.ts';
import { OwnerService } from './service.ts';

const APP = 'ab'.repeat(32);
const clock = { now: () => 1_800_000_000_000 };

async function build(store: MemoryStore, nodeKey = generateKeyPairSync('ed25519').privateKey) {
  const identity = await NodeIdentity.load(store, nodeKey, clock.now());
  const governance = new Governance({ store, identity, clock, bus: new EventBus(), appliers: createAppliers() });
  await governance.load();
  const namespaces = new NamespaceService({ governance, identity, clock });
  const groups = new GroupService({ governance, identity, namespaces });
  return { identity, governance, namespaces, groups, owner: new OwnerService({ governance, identity }), nodeKey };
}

async function refusal(p: Promise<unknown> | (() => unknown)): Promise<{ kind: string; message: string }> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    if (e instanceof HearthError) return { kind: e.kind, message: e.message };
    throw e;
  }
  return { kind: 'ok', message: '' };
}

/** a stranger's account root, as a nodeless account would hold it */
function strangerRoot() {
  const pair = generateKeyPair('ed25519');
  const key = privateKeyObject(pair.privateKey);
  return { rootKey: pair.publicKey, account: accountIdOf(Buffer.from(pair.publicKey, 'hex')), sign: (m: Buffer) => ed25519Sign(key, m) };
}

describe('owner-op counter', () => {
  let store: MemoryStore;
  let n: Awaited<ReturnType<typeof build>>;
  let nsId: string;
  const counter = () => n.governance.requireGroup(nsId).group.ownerOpCounter;

  beforeEach(async () => {
    store = new MemoryStore();
    n = await build(store);
    nsId = (await n.namespaces.found({ applicationId: APP })).id;
  });

  it('advances 0 → 1 → 2 by one per self-signed op and survives a reload', async () => {
    expect(counter()).toBe('0');
    await n.owner.changeNamespaceAdmin(nsId, n.identity.accountId);
    expect(counter()).toBe('1');
    await n.owner.transferOwnership(nsId, n.identity.accountId);
    expect(counter()).toBe('2');
    const again = await build(store, n.nodeKey);
    expect(again.governance.requireGroup(nsId).group.ownerOpCounter).toBe('2');
    expect(again.governance.requireGroup(nsId).group.admin).toBe(n.identity.accountId);
    const ops = await again.governance.ops(nsId);
    expect(ops.map((o) => o.kind)).toEqual(['namespace.created', OWNER_OPS.adminChanged, OWNER_OPS.transfer]);
  });

  it('accepts a caller-supplied proof naming the current counter, then refuses its replay as stale (409)', async () => {
    const root = n.governance.requireGroup(nsId).group;
    const proof = rootGuard({ ns: n.governance.namespace(nsId)!, group: root, kind: 'AdminChanged', opDigest: opDigestOf(adminChangedOpBorsh(n.identity.accountId)), account: n.identity.accountId, identity: n.identity });
    await n.owner.changeNamespaceAdmin(nsId, n.identity.accountId, proof);
    expect(counter()).toBe('1');
    const r = await refusal(n.owner.changeNamespaceAdmin(nsId, n.identity.accountId, proof));
    expect(r).toEqual({ kind: 'conflict', message: 'stale owner-op counter: expected 1, got 0' });
    expect(counter()).toBe('1');
  });

  it('refuses an empty proof (400), a non-hex or undecodable one (400), a stranger root (403), a mismatched op (400)', async () => {
    expect((await refusal(n.owner.transferOwnership(nsId, n.identity.accountId, ''))).kind).toBe('bad_request');
    expect((await refusal(n.owner.transferOwnership(nsId, n.identity.accountId, ''))).message).toBe('rootProof: empty; omit the field entirely if you have no proof');
    expect((await refusal(n.owner.transferOwnership(nsId, n.identity.accountId, 'zz'))).kind).toBe('bad_request');
    expect((await refusal(n.owner.transferOwnership(nsId, n.identity.accountId, 'deadbeef'))).kind).toBe('bad_request');
    const s = strangerRoot();
    const auth = { account: s.account, namespaceId: nsId, groupId: nsId, kind: OWNER_OP_KIND.AdminChanged as number, opDigest: opDigestOf(adminChangedOpBorsh(n.identity.accountId)), counter: 0n, keyEpoch: 0 };
    expect((await refusal(n.owner.changeNamespaceAdmin(nsId, n.identity.accountId, signOwnerOp(s.rootKey, s.sign, auth)))).kind).toBe('forbidden');
    // the stranger's root claiming this node's account: does not derive → invalid proof
    const forged = signOwnerOp(s.rootKey, s.sign, { ...auth, account: n.identity.accountId });
    expect((await refusal(n.owner.changeNamespaceAdmin(nsId, n.identity.accountId, forged))).kind).toBe('bad_request');
    // the right root, but a proof for another op kind / digest / a broken signature
    const mine = (over: Partial<typeof auth>) =>
      signOwnerOp(n.identity.rootPublicKey, (m) => n.identity.signWithRoot(m), { ...auth, account: n.identity.accountId, ...over });
    expect((await refusal(n.owner.changeNamespaceAdmin(nsId, n.identity.accountId, mine({ kind: 0 })))).kind).toBe('bad_request');
    expect((await refusal(n.owner.changeNamespaceAdmin(nsId, n.identity.accountId, mine({ opDigest: '00'.repeat(32) })))).kind).toBe('bad_request');
    const decoded = decodeSignedOwnerOp(mine({}));
    const tampered = encodeSignedOwnerOp({ ...decoded, signature: '00'.repeat(64) });
    expect((await refusal(n.owner.changeNamespaceAdmin(nsId, n.identity.accountId, tampered))).kind).toBe('bad_request');
    expect(await refusal(n.owner.changeNamespaceAdmin(nsId, n.identity.accountId, mine({})))).toEqual({ kind: 'ok', message: '' });
    expect(counter()).toBe('1');
  });

  it('without a proof, a node that does not hold the owner root answers 403; a proof from the owner passes the guard', async () => {
    const s = strangerRoot();
    const ns = n.governance.namespace(nsId)!;
    const group = { ...ns.groups[nsId]!, owner: s.account };
    const opDigest = opDigestOf(transferOwnershipOpBorsh(s.account));
    const absent = await refusal(() => rootGuard({ ns, group, kind: 'TransferOwnership', opDigest, account: s.account, identity: n.identity }));
    expect(absent.kind).toBe('forbidden');
    const proof = signOwnerOp(s.rootKey, s.sign, { account: s.account, namespaceId: nsId, groupId: nsId, kind: 0, opDigest, counter: 0n, keyEpoch: 0 });
    expect(verifyRootProof({ ns, group, kind: 'TransferOwnership', opDigest, account: s.account, rootProof: proof }).auth.account).toBe(s.account);
  });

  it('encodes an empty-chain proof in 242 bytes and round-trips u64 counters exactly', () => {
    const s = strangerRoot();
    const auth = { account: s.account, namespaceId: '11'.repeat(32), groupId: '22'.repeat(32), kind: 0, opDigest: '33'.repeat(32), counter: 2n ** 64n - 1n, keyEpoch: 0 };
    const hex = signOwnerOp(s.rootKey, s.sign, auth);
    expect(hex.length).toBe(484);
    expect(decodeSignedOwnerOp(hex).auth.counter).toBe(2n ** 64n - 1n);
  });
});

describe('owner-delete', () => {
  it('refuses a group whose subtree holds contexts (409) and deletes the whole subtree otherwise', async () => {
    const store = new MemoryStore();
    const n = await build(store);
    const nsId = (await n.namespaces.found({ applicationId: APP })).id;
    const sub = await n.groups.create({ applicationId: APP, parentGroupId: nsId });
    const deep = await n.groups.create({ applicationId: APP, parentGroupId: sub });
    const ns = structuredClone(n.governance.namespace(nsId)!);
    ns.groups[deep]!.contexts['cc'.repeat(32)] = { metadata: null, registeredAt: 1 };
    const proof = rootGuard({ ns, group: ns.groups[sub]!, kind: 'GroupDelete', opDigest: opDigestOf(Buffer.from([0x0e])), account: n.identity.accountId, identity: n.identity });
    const op = { namespaceId: nsId, groupId: sub, account: n.identity.accountId, kind: OWNER_OPS.delete, body: { rootProof: proof } } as never;
    const apply = (state: typeof ns) => createAppliers().get(OWNER_OPS.delete)({ ns: state, op, emit: () => undefined });
    expect((await refusal(() => apply(structuredClone(ns)))).kind).toBe('conflict');
    await n.owner.ownerDelete(sub);
    expect(n.governance.locate(sub)).toBeUndefined();
    expect(n.governance.locate(deep)).toBeUndefined();
  });
});
