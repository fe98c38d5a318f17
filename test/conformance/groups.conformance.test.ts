/**
 * Conformance: every `/admin-api/groups*` operation (groups, membership and tree, settings and
 * metadata, owner operations, invitations and joins, seal and ownership proofs) driven through the
 * SDK on one node; each answer is checked against the node's OpenAPI document. Calls into other
 * areas that only set state up (identity, installing the test app, creating a context) go through
 * a second, unrecorded client sharing the session, so this file checks the groups area alone.
 */
import { createHash, createPrivateKey, createPublicKey, verify } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HttpError, type Client, type NodeIdentity } from '../../src/client/index.ts';
import { CAPABILITIES } from '../../src/client/settings.ts';
import { ed25519Verify } from '../../src/crypto/keys.ts';
import { invitationBorsh } from '../../src/governance/invitations/codec.ts';
import { makeBundle } from '../helpers/bundles.ts';
import { startConformanceNode, type Conformance } from '../helpers/conformance.ts';
import type { TestNode } from '../helpers/node.ts';
import { buildTestApp } from '../helpers/wasm-apps.ts';
import { rawPrivateSeed } from '../../src/crypto/keys.ts';

const X = '1'.repeat(64);
const Y = '2'.repeat(64);
const M = ['00'.repeat(48)];
const MEASURED = { allowedMrtd: M, allowedRtmr1: M, allowedRtmr2: M, allowedRtmr3: M };
const claim = { audience: 'https://relying.example', subject: 'did:example:alice', nonce: '7a'.repeat(16), expiresAtMs: Date.now() + 3_600_000 };

let node: TestNode;
let conformance: Conformance;
/** records every exchange: the groups area */
let c: Client;
/** the same session, unrecorded: set-up calls into other areas */
let setup: Client;
let me: NodeIdentity;
let appId: string;
let ns: string;
let sub: string;

const status = (p: Promise<unknown>) => p.then(() => 200, (e: HttpError) => e.status);
const counter = async (g: string) => BigInt((await c.groups.info(g)).ownerOpCounter);

function signedBy(p: { signerPublicKey: string; signedPayload: string; signature: string }): boolean {
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(p.signerPublicKey, 'hex').toString('base64url') }, format: 'jwk' });
  const signed = Buffer.concat([Buffer.from('calimero.ownership-claim.v1\0'), Buffer.from(p.signedPayload, 'base64')]);
  return verify(null, signed, key, Buffer.from(p.signature, 'base64'));
}

beforeAll(async () => {
  ({ node, conformance, client: c, setup } = await startConformanceNode());
  me = await setup.accounts.identity();
  const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.kv' });
  appId = (await setup.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path } })).applicationId;
}, 120_000);
afterAll(() => node.destroy());

it('creates a namespace and a subgroup and reads GroupInfo', async () => {
  ns = (await c.groups.create({ applicationId: appId, name: 'proj' })).groupId;
  const info = await c.groups.info(ns);
  expect(info).toMatchObject({ groupId: ns, namespaceId: ns, targetApplicationId: appId, memberCount: 1, contextCount: 0 });
  expect(info).not.toHaveProperty('name'); // GroupInfo has no name (spec); the namespace listing carries it
  expect(await counter(ns)).toBe(0n);
  sub = (await c.groups.create({ applicationId: appId, parentGroupId: ns, name: 'team' })).groupId;
  expect(sub).not.toBe(ns);
  expect(await c.groups.info(sub)).toMatchObject({ groupId: sub, namespaceId: ns, subgroupVisibility: 'open' });
  expect(await c.namespaces.groups(ns)).toContainEqual({ groupId: sub, name: 'team' });
  expect(await c.groups.sync(sub)).toMatchObject({ groupId: sub, targetApplicationId: appId, contextCount: 0 }); // standalone: answers from local state
});

it('adds, re-roles, lists and removes members; lists member devices', async () => {
  expect(await c.groups.members(ns)).toEqual([{ identity: me.accountId, role: 'Admin' }]);
  await c.groups.addMembers(ns, [{ identity: X, role: 'Member' }]);
  await c.groups.setMemberRole(ns, X, 'ReadOnly');
  expect(await c.groups.members(ns)).toEqual(expect.arrayContaining([{ identity: X, role: 'ReadOnly' }]));
  await c.groups.setAutoFollow(ns, me.accountId, { autoFollowContexts: true, autoFollowSubgroups: false });

  const devices = await c.groups.memberDevices(ns);
  expect(devices.map((d) => d.account).sort()).toEqual([me.accountId, X].sort());
  expect(devices.find((d) => d.account === me.accountId)?.devices).toEqual([{ deviceId: me.deviceId, signingKey: me.publicKey }]);
  expect(await c.groups.memberDevices(ns, { offset: 0, limit: 1 })).toHaveLength(1);

  await c.groups.removeMembers(ns, [X]);
  expect((await c.groups.members(ns)).map((m) => m.identity)).not.toContain(X);
  expect(await status(c.groups.members('f'.repeat(64)))).toBe(404);
});

it('lists, reparents and deletes subgroups', async () => {
  const a = (await c.groups.create({ applicationId: appId, parentGroupId: ns, name: 'a' })).groupId;
  const b = (await c.groups.create({ applicationId: appId, parentGroupId: ns, name: 'b', visibility: 'restricted' })).groupId;
  expect(await c.groups.subgroups(ns)).toEqual(expect.arrayContaining([{ groupId: a, name: 'a' }, { groupId: b, name: 'b' }]));
  expect(await c.groups.reparent(b, a)).toBe(true);
  expect(await c.groups.subgroups(a)).toEqual([{ groupId: b, name: 'b' }]);
  expect(await c.groups.deleteGroup(a)).toEqual({ isDeleted: true });
  expect(await status(c.groups.info(b))).toBe(404); // the subtree went with it
});

it('registers a context: lists it, keeps its metadata, proves ownership of it, detaches it', async () => {
  const ctx = (await setup.contexts.create({ groupId: sub, applicationId: appId, initializationParams: [] })).contextId;
  expect(await c.groups.contexts(sub)).toEqual([{ contextId: ctx }]);
  expect(await c.settings.contextMetadata(sub, ctx)).toBeNull();
  await c.settings.setContextMetadata(sub, ctx, { name: 'board', data: { topic: 'x' } });
  expect(await c.settings.contextMetadata(sub, ctx)).toMatchObject({ name: 'board', data: { topic: 'x' }, updatedBy: me.accountId });

  const proof = await c.groups.issueOwnershipProof(ns, { ...claim, contextId: ctx });
  expect(proof.signerPublicKey).toBe(me.publicKey);
  expect(signedBy(proof)).toBe(true);
  expect(JSON.parse(Buffer.from(proof.signedPayload, 'base64').toString('utf8'))).toMatchObject({ group_id: ns, context_id: ctx, subject: claim.subject });

  await c.groups.removeContext(sub, ctx);
  expect(await c.groups.contexts(sub)).toEqual([]);
});

it('seals to an account root and signs a namespace ownership proof', async () => {
  const sealed = await c.groups.seal(ns, me.accountId, 'c0ffee');
  expect(sealed.accountRootEpoch).toBe(0);
  expect(sealed.ciphertext).toHaveLength(2 * (3 + 16)); // plaintext + GCM tag
  const proof = await c.groups.issueNamespaceOwnershipProof(ns, claim);
  expect(signedBy(proof)).toBe(true);
  expect(proof.founding.founderAccountId).toBe(me.accountId);
  expect(proof.credential).toMatch(/^[0-9a-f]+$/);
});

it('reads and writes capabilities, visibility and metadata; GroupInfo reflects them', async () => {
  await c.groups.addMembers(ns, [{ identity: X, role: 'Member' }]);
  expect(await c.settings.memberCapabilities(ns, X)).toBe(CAPABILITIES.CAN_JOIN_OPEN_SUBGROUPS);
  await c.settings.setMemberCapabilities(ns, X, CAPABILITIES.CAN_JOIN_OPEN_SUBGROUPS | CAPABILITIES.CAN_AUTHOR_ON_BEHALF);
  expect(await c.settings.memberCapabilities(ns, X)).toBe(516);
  await c.settings.setDefaultCapabilities(ns, 7);
  expect((await c.groups.info(ns)).defaultCapabilities).toBe(7);
  await c.settings.setSubgroupVisibility(sub, 'restricted');
  expect((await c.groups.info(sub)).subgroupVisibility).toBe('restricted');
  await c.settings.setSubgroupVisibility(sub, 'open');

  expect(await c.settings.groupMetadata(sub)).toBeNull();
  await c.settings.setGroupMetadata(sub, { name: 'Core team', data: { team: 'core' } });
  expect(await c.settings.groupMetadata(sub)).toMatchObject({ name: 'Core team', data: { team: 'core' }, updatedBy: me.accountId });
  expect((await c.groups.info(sub)).metadata).toMatchObject({ name: 'Core team' });
  expect(await c.settings.memberMetadata(ns, X)).toBeNull();
  await c.settings.setMemberMetadata(ns, X, { data: { desk: '4' } });
  expect(await c.settings.memberMetadata(ns, X)).toMatchObject({ name: null, data: { desk: '4' } });
});

it('sets the TEE policies as root-guarded ops that advance the owner-op counter', async () => {
  expect(await c.settings.teeAdmissionPolicy(ns)).toMatchObject({ enabled: false, allowedMrtd: [], mode: 'replica' });
  const start = await counter(ns);
  await c.settings.setTeeAdmissionPolicy(ns, { ...MEASURED, allowedTcbStatuses: ['UpToDate'] });
  expect(await c.settings.teeAdmissionPolicy(ns)).toMatchObject({ enabled: true, allowedMrtd: M, allowedTcbStatuses: ['UpToDate'] });
  await c.settings.setTeeAdmissionPolicy(ns, { signedRelease: { allowedProfiles: ['locked-read-only'], minReleaseVersion: '2.3.72' }, mode: 'relay' });
  expect(await c.settings.teeAdmissionPolicy(ns)).toMatchObject({ signedRelease: { allowedProfiles: ['locked-read-only'] }, mode: 'relay' });
  await c.settings.setTeeAuthoringPolicy(ns, { allowedMrtd: M });
  await c.settings.disableTeeAuthoringPolicy(ns);
  expect(await counter(ns)).toBe(start + 4n);
});

it('transfers ownership, leaves, joins back through inheritance, and owner-deletes', async () => {
  const s = (await c.groups.create({ applicationId: appId, parentGroupId: ns })).groupId;
  await c.groups.addMembers(s, [{ identity: Y, role: 'Admin' }]);
  await c.owner.transferOwnership(s, { newOwner: Y });
  expect(await counter(s)).toBe(1n);
  await c.groups.leave(s);
  expect((await c.groups.joinViaInheritance(s)).wasInherited).toBe(true);
  expect(await c.groups.joinViaInheritance(s)).toEqual({ groupId: s, memberPublicKey: me.publicKey, wasInherited: false });

  const doomed = (await c.groups.create({ applicationId: appId, parentGroupId: ns })).groupId;
  await c.owner.ownerDelete(doomed);
  expect(await status(c.groups.info(doomed))).toBe(404);
});

it('mints a signed group invitation and joins with it (already a member: nothing changes)', async () => {
  const { invitation, groupName } = await c.invitations.inviteToGroup(sub, { expirationTimestamp: 600 });
  expect(groupName).toBe('team');
  expect(Buffer.from(invitation.invitation.group_id).toString('hex')).toBe(sub);
  const digest = createHash('sha256').update(invitationBorsh(invitation.invitation)).digest();
  expect(ed25519Verify(me.publicKey, digest, Buffer.from(invitation.inviter_signature, 'hex'))).toBe(true);
  expect(await c.invitations.joinGroup(invitation)).toEqual({ groupId: sub, memberIdentity: me.publicKey, memberAccount: me.accountId });
});

it('revokes an invitation (hearth), by the invitation or by its id; again answers the same', async () => {
  const { invitation } = await c.invitations.inviteToGroup(sub, { expirationTimestamp: 600 });
  const invitationId = createHash('sha256').update(invitationBorsh(invitation.invitation)).digest('hex');
  expect(await c.invitations.revoke(sub, { invitation })).toEqual({ groupId: sub, invitationId, revoked: true });
  expect(await c.invitations.revoke(sub, { invitationId })).toEqual({ groupId: sub, invitationId, revoked: true });
  expect(await status(c.invitations.revoke(ns, { invitation }))).toBe(400); // an invitation to another group
});

it("registers the node's own signing key for a group", async () => {
  const signingKey = rawPrivateSeed(createPrivateKey(await readFile(node.paths.nodeKey))).toString('hex');
  expect(await c.groups.registerSigningKey(ns, { signingKey })).toEqual({ publicKey: me.publicKey });
});

it('answers every groups operation as the OpenAPI document says', () => {
  conformance.assertAreaCovered('groups');
});
