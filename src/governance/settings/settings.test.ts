/**
 * The settings family through a real Governance on a MemoryStore: capabilities (read-modify-write
 * keeps bits), default capabilities, subgroup visibility, metadata for group/member/context, the
 * TEE policies (forms, root guard, counter), each refusal (400/403/404/409) and a reload.
 */
import { generateKeyPairSync } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { NodeIdentity } from '../../identity/identity.ts';
import { accountIdOf } from '../../crypto/ids.ts';
import { ed25519Sign, generateKeyPair, privateKeyObject } from '../../crypto/keys.ts';
import { HearthError } from '../../errors.ts';
import { EventBus } from '../../bus.ts';
import { MemoryStore } from '../../store/memory.ts';
import { MembersService } from '../groups/members-service.ts';
import { GroupService } from '../groups/service.ts';
import { Governance } from '../log.ts';
import { NamespaceService } from '../namespaces/service.ts';
import { createAppliers } from '../ops.ts';
import { OWNER_OP_KIND, signOwnerOp } from '../root-guard.ts';
import { CAP } from '../types.ts';
import { SettingsService } from './service.ts';
import { admissionOp } from './tee-ops.ts';
import { validateAdmissionPolicy } from './validate.ts';

const APP = 'ab'.repeat(32);
const OTHER = 'cd'.repeat(32);
const CTX = 'ef'.repeat(32);
const M = ['aa'.repeat(48)];
const MEASURED = { allowedMrtd: M, allowedRtmr1: M, allowedRtmr2: M, allowedRtmr3: M };
let now = 1_800_000_000_000;
const clock = { now: () => now };

/** Context registration belongs to the contexts family (a later issue); a test op stands in for it. */
function appliers() {
  const registry = createAppliers();
  registry.register('test.context.registered', ({ ns, op }) => {
    ns.groups[op.groupId]!.contexts[String(op.body.contextId)] = { metadata: null, registeredAt: op.timestampMs };
  });
  // a TEE row, as fleet admission would write it (an op, so it survives the log's re-verification on start)
  registry.register('test.tee.admitted', ({ ns, op }) => {
    ns.groups[op.groupId]!.members[String(op.body.account)] = { role: 'ReadOnlyTee', autoFollow: { contexts: true, subgroups: false }, metadata: null, joinedAt: op.timestampMs };
  });
  return registry;
}

async function build(store: MemoryStore, nodeKey = generateKeyPairSync('ed25519').privateKey) {
  const identity = await NodeIdentity.load(store, nodeKey, clock.now());
  const governance = new Governance({ store, identity, clock, bus: new EventBus(), appliers: appliers() });
  await governance.load();
  const namespaces = new NamespaceService({ governance, identity, clock });
  const groups = new GroupService({ governance, identity, namespaces });
  const members = new MembersService({ governance, identity });
  return { identity, governance, namespaces, groups, members, settings: new SettingsService({ governance, identity }), nodeKey };
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

let store: MemoryStore;
let n: Awaited<ReturnType<typeof build>>;
let nsId: string;
let sub: string;
let me: string;
const root = () => n.governance.requireGroup(nsId).group;

beforeEach(async () => {
  store = new MemoryStore();
  n = await build(store);
  me = n.identity.accountId;
  nsId = (await n.namespaces.found({ applicationId: APP })).id;
  sub = await n.groups.create({ applicationId: APP, parentGroupId: nsId });
});

/** Adds OTHER as an admin and demotes this node's account to Member (keeping its mask override). */
async function demoteSelf(groupId: string, mask?: number) {
  await n.members.addMembers(groupId, [{ identity: OTHER, role: 'Admin' }]);
  if (mask !== undefined) await n.settings.setCapabilities(groupId, me, mask);
  await n.members.setRole(groupId, me, 'Member');
}

describe('capabilities', () => {
  it('reads the stored mask; a set keeps exactly the bits sent; undefined bits survive', async () => {
    await n.members.addMembers(nsId, [{ identity: OTHER, role: 'Member' }]);
    expect(n.settings.capabilities(nsId, OTHER)).toBe(CAP.CAN_JOIN_OPEN_SUBGROUPS);
    const granted = n.settings.capabilities(nsId, OTHER) | CAP.CAN_AUTHOR_ON_BEHALF;
    await n.settings.setCapabilities(nsId, OTHER, granted);
    expect(n.settings.capabilities(nsId, OTHER)).toBe(4 | 512);
    await n.settings.setCapabilities(nsId, OTHER, 0x8000_0000 + (8 | 32));
    expect(n.settings.capabilities(nsId, OTHER)).toBe(0x8000_0000 + (8 | 32));
  });

  it('default capabilities and visibility show in the group state; the default seeds unset members', async () => {
    await n.settings.setDefaultCapabilities(nsId, 7);
    expect(root().defaultCapabilities).toBe(7);
    await n.members.addMembers(nsId, [{ identity: OTHER, role: 'Member' }]);
    expect(n.settings.capabilities(nsId, OTHER)).toBe(7);
    await n.settings.setSubgroupVisibility(sub, 'restricted');
    expect(n.governance.requireGroup(sub).group.subgroupVisibility).toBe('restricted');
    await n.settings.setSubgroupVisibility(sub, 'open');
    expect(n.governance.requireGroup(sub).group.subgroupVisibility).toBe('open');
  });

  it('refuses: non-member 404, inherited-only 409, out-of-range mask 400', async () => {
    expect((await refusal(() => n.settings.capabilities(nsId, OTHER))).kind).toBe('not_found');
    expect((await refusal(n.settings.setCapabilities(nsId, OTHER, 1))).kind).toBe('not_found');
    await n.members.addMembers(nsId, [{ identity: OTHER, role: 'Member' }]);
    // OTHER inherits the open subgroup through CAN_JOIN_OPEN_SUBGROUPS: readable, not settable
    expect(n.settings.capabilities(sub, OTHER)).toBe(CAP.CAN_JOIN_OPEN_SUBGROUPS);
    expect((await refusal(n.settings.setCapabilities(sub, OTHER, 1))).kind).toBe('conflict');
    expect((await refusal(n.settings.setCapabilities(nsId, OTHER, -1))).kind).toBe('bad_request');
    expect((await refusal(n.settings.setDefaultCapabilities(nsId, 2 ** 32))).kind).toBe('bad_request');
    expect((await refusal(n.settings.setSubgroupVisibility(sub, 'Open' as never))).message).toContain(`must be 'open' or 'restricted'`);
  });

  it('403 naming what is missing once this node is no longer an admin', async () => {
    await demoteSelf(nsId, CAP.CAN_MANAGE_VISIBILITY);
    const caps = await refusal(n.settings.setCapabilities(nsId, OTHER, 1));
    expect(caps).toMatchObject({ kind: 'forbidden' });
    expect(caps.message).toContain('only an admin');
    expect((await refusal(n.settings.setDefaultCapabilities(nsId, 1))).kind).toBe('forbidden');
    // visibility needs CAN_MANAGE_VISIBILITY, which the override kept
    await n.settings.setSubgroupVisibility(nsId, 'restricted');
    const noMeta = await refusal(n.settings.setMetadata(nsId, { target: 'group' }, { data: {} }));
    expect(noMeta.kind).toBe('forbidden');
    expect(noMeta.message).toContain('CAN_MANAGE_METADATA');
  });

  it('visibility without CAN_MANAGE_VISIBILITY is 403 naming it', async () => {
    await demoteSelf(nsId, 0);
    const r = await refusal(n.settings.setSubgroupVisibility(nsId, 'open'));
    expect(r.kind).toBe('forbidden');
    expect(r.message).toContain('CAN_MANAGE_VISIBILITY');
  });
});

describe('metadata', () => {
  it('getters answer null, then the record; data replaces, an absent name keeps the stored one', async () => {
    expect(n.settings.metadata(nsId, { target: 'group' })).toBeNull();
    await n.settings.setMetadata(nsId, { target: 'group' }, { name: 'team', data: { team: 'a', role: 'x' } });
    expect(n.settings.metadata(nsId, { target: 'group' })).toEqual({ name: 'team', data: { team: 'a', role: 'x' }, updatedAt: now, updatedBy: me });
    now += 5;
    await n.settings.setMetadata(nsId, { target: 'group' }, { data: { only: '1' } });
    expect(n.settings.metadata(nsId, { target: 'group' })).toEqual({ name: 'team', data: { only: '1' }, updatedAt: now, updatedBy: me });
    await n.settings.setMetadata(nsId, { target: 'member', account: me }, { name: 'me' });
    expect(n.settings.metadata(nsId, { target: 'member', account: me })).toMatchObject({ name: 'me', data: {} });
  });

  it('refuses an empty name and over-limit maps (400), unknown members and contexts (404)', async () => {
    expect((await refusal(n.settings.setMetadata(nsId, { target: 'group' }, { name: '' }))).kind).toBe('bad_request');
    expect((await refusal(n.settings.setMetadata(nsId, { target: 'group' }, { name: 'x'.repeat(65) }))).message).toMatch(/^metadata: /);
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));
    expect((await refusal(n.settings.setMetadata(nsId, { target: 'group' }, { data: many }))).kind).toBe('bad_request');
    expect((await refusal(n.settings.setMetadata(nsId, { target: 'group' }, { data: { '': 'v' } }))).kind).toBe('bad_request');
    expect((await refusal(n.settings.setMetadata(nsId, { target: 'group' }, { data: { k: 'v'.repeat(4097) } }))).kind).toBe('bad_request');
    expect((await refusal(n.settings.setMetadata(nsId, { target: 'member', account: OTHER }, {}))).kind).toBe('not_found');
    expect((await refusal(() => n.settings.metadata(nsId, { target: 'member', account: OTHER }))).kind).toBe('not_found');
    expect((await refusal(() => n.settings.metadata(nsId, { target: 'context', contextId: CTX }))).kind).toBe('not_found');
    expect((await refusal(n.settings.setMetadata(nsId, { target: 'context', contextId: CTX }, {}))).kind).toBe('not_found');
  });

  it('context metadata needs a registered context and round-trips', async () => {
    await n.governance.submit(nsId, sub, 'test.context.registered', { contextId: CTX });
    expect(n.settings.metadata(sub, { target: 'context', contextId: CTX })).toBeNull();
    await n.settings.setMetadata(sub, { target: 'context', contextId: CTX }, { data: { k: 'v' } });
    expect(n.settings.metadata(sub, { target: 'context', contextId: CTX })).toMatchObject({ name: null, data: { k: 'v' }, updatedBy: me });
  });

  it('a member may always set its own member metadata', async () => {
    await demoteSelf(nsId, 0);
    await n.settings.setMetadata(nsId, { target: 'member', account: me }, { data: { mine: 'yes' } });
    expect(n.settings.metadata(nsId, { target: 'member', account: me })?.data).toEqual({ mine: 'yes' });
    expect((await refusal(n.settings.setMetadata(nsId, { target: 'member', account: OTHER }, {}))).kind).toBe('forbidden');
  });
});

describe('TEE admission policy', () => {
  it('answers disabled defaults, then the policy set; the root counter advances by one per set', async () => {
    expect(n.settings.admissionPolicy(nsId)).toEqual({
      enabled: false,
      allowedMrtd: [],
      allowedRtmr0: [],
      allowedRtmr1: [],
      allowedRtmr2: [],
      allowedRtmr3: [],
      allowedTcbStatuses: [],
      acceptMock: false,
      mode: 'replica',
    });
    await n.settings.setAdmissionPolicy(nsId, { ...MEASURED, acceptMock: true, allowedTcbStatuses: ['UpToDate'] });
    expect(n.settings.admissionPolicy(nsId)).toMatchObject({ enabled: true, allowedMrtd: M, acceptMock: true, mode: 'replica' });
    expect(root().ownerOpCounter).toBe('1');
    await n.settings.setAdmissionPolicy(nsId, { signedRelease: { allowedProfiles: ['locked-read-only'], minReleaseVersion: '2.3' }, mode: 'relay' });
    const got = n.settings.admissionPolicy(sub); // a subgroup reads its namespace's policy
    expect(got).toMatchObject({ enabled: true, allowedMrtd: [], mode: 'relay', signedRelease: { allowedProfiles: ['locked-read-only'], minReleaseVersion: '2.3.0' } });
    expect(root().ownerOpCounter).toBe('2');
  });

  it('validates both forms, the mode and the target (400)', async () => {
    const bad = async (body: Record<string, unknown>) => refusal(n.settings.setAdmissionPolicy(nsId, body));
    expect((await bad({ allowedMrtd: M, acceptMock: true })).message).toContain('allowedRtmr1, allowedRtmr2, allowedRtmr3 must not be empty');
    expect((await bad({ acceptMock: true })).kind).toBe('bad_request');
    expect((await bad({ ...MEASURED, mode: 'Relay' })).message).toContain(`mode must be 'replica' or 'relay'`);
    expect((await bad({ allowedRtmr0: M, signedRelease: { allowedProfiles: ['p'] } })).message).toContain('allowedRtmr0 must be empty');
    expect((await bad({ signedRelease: { allowedProfiles: [] } })).kind).toBe('bad_request');
    expect((await bad({ signedRelease: { allowedProfiles: [' '] } })).kind).toBe('bad_request');
    const onSub = await refusal(n.settings.setAdmissionPolicy(sub, MEASURED));
    expect(onSub).toMatchObject({ kind: 'bad_request' });
    expect(onSub.message).toContain('TeePolicyNotOnSubgroup');
    expect(root().ownerOpCounter).toBe('0');
  });

  it('is root-guarded: empty proof 400, a stranger root 403, a stale counter 409, a valid proof passes', async () => {
    const policy = validateAdmissionPolicy(MEASURED);
    const { digest } = admissionOp(policy);
    expect((await refusal(n.settings.setAdmissionPolicy(nsId, MEASURED, ''))).kind).toBe('bad_request');
    const pair = generateKeyPair('ed25519');
    const key = privateKeyObject(pair.privateKey);
    const stranger = accountIdOf(Buffer.from(pair.publicKey, 'hex'));
    const auth = (account: string, counter: bigint) => ({ account, namespaceId: nsId, groupId: nsId, kind: OWNER_OP_KIND.TeeAdmissionPolicy, opDigest: digest, counter, keyEpoch: 0 });
    const foreign = signOwnerOp(pair.publicKey, (m) => ed25519Sign(key, m), auth(stranger, 0n));
    expect((await refusal(n.settings.setAdmissionPolicy(nsId, MEASURED, foreign))).kind).toBe('forbidden');
    const own = (c: bigint) => signOwnerOp(n.identity.rootPublicKey, (m) => n.identity.signWithRoot(m), auth(me, c));
    const stale = await refusal(n.settings.setAdmissionPolicy(nsId, MEASURED, own(3n)));
    expect(stale).toMatchObject({ kind: 'conflict', message: 'stale owner-op counter: expected 0, got 3' });
    await n.settings.setAdmissionPolicy(nsId, MEASURED, own(0n));
    expect(root().ownerOpCounter).toBe('1');
    // a proof for another policy (digest mismatch) is a 400
    expect((await refusal(n.settings.setAdmissionPolicy(nsId, { ...MEASURED, acceptMock: true }, own(1n)))).kind).toBe('bad_request');
  });

  it('needs an admin of the namespace root (403)', async () => {
    await demoteSelf(nsId);
    const r = await refusal(n.settings.setAdmissionPolicy(nsId, MEASURED));
    expect(r.kind).toBe('forbidden');
    expect(r.message).toContain('only an admin');
  });

  it('changing the mode converts admitted TEEs', async () => {
    await n.governance.submit(nsId, sub, 'test.tee.admitted', { account: OTHER });
    expect(n.governance.requireGroup(sub).group.members[OTHER]?.role).toBe('ReadOnlyTee');
    await n.settings.setAdmissionPolicy(nsId, { ...MEASURED, mode: 'relay' });
    expect(n.governance.requireGroup(sub).group.members[OTHER]?.role).toBe('RelayTee');
  });
});

describe('TEE authoring policy', () => {
  it('sets and disables on the namespace root, each a root-guarded op; a subgroup is 400', async () => {
    await n.settings.setAuthoringPolicy(nsId, M);
    expect(root().teeAuthoringPolicy).toEqual({ allowedMrtd: M });
    expect(root().ownerOpCounter).toBe('1');
    await n.settings.setAuthoringPolicy(nsId, []);
    expect(root().teeAuthoringPolicy).toBeUndefined();
    expect(root().ownerOpCounter).toBe('2');
    const onSub = await refusal(n.settings.setAuthoringPolicy(sub, M));
    expect(onSub.message).toContain('TeeAuthoringPolicyNotOnSubgroup');
    expect((await refusal(n.settings.setAuthoringPolicy(nsId, M, ''))).kind).toBe('bad_request');
  });
});

it('everything set survives a reload', async () => {
  await n.settings.setDefaultCapabilities(nsId, 7);
  await n.settings.setSubgroupVisibility(sub, 'restricted');
  await n.settings.setMetadata(nsId, { target: 'group' }, { data: { a: 'b' } });
  await n.settings.setAdmissionPolicy(nsId, MEASURED);
  const again = await build(store, n.nodeKey);
  expect(again.governance.requireGroup(nsId).group).toMatchObject({ defaultCapabilities: 7, ownerOpCounter: '1', metadata: { data: { a: 'b' } } });
  expect(again.governance.requireGroup(sub).group.subgroupVisibility).toBe('restricted');
  expect(again.settings.admissionPolicy(nsId).enabled).toBe(true);
});
