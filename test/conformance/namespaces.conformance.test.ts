/**
 * Conformance: the namespace routes (admin spec "Namespaces"; admin-wire-b §2) through the SDK on one
 * node: founding, reading, listing and deleting, subgroups, invitations and joins, admitting a
 * keyholder's self-signed join, device revoke and link, the admin change and leaving. Set-up steps
 * that belong to the groups area (adding members, handing ownership over) go through a second,
 * unrecorded client, so this file checks only its own area against the OpenAPI document.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { encodeScopeProof } from '../../src/identity/credentials.ts';
import { encodeCredential } from '../../src/identity/pairing.ts';
import type { Client } from '../../src/client/index.ts';
import { accountIdOf, deviceIdOf } from '../../src/crypto/ids.ts';
import { ed25519Sign, generateKeyPair, privateKeyObject } from '../../src/crypto/keys.ts';
import { encodeSignedJoin, joinDigest } from '../../src/governance/namespaces/manage-admit.ts';
import { startConformanceNode, type Conformance } from '../helpers/conformance.ts';
import type { TestNode } from '../helpers/node.ts';
import { httpError } from '../helpers/status.ts';

const APP = 'a'.repeat(64);
const APP2 = 'b'.repeat(64);
const OTHER = 'e'.repeat(64);
let node: TestNode;
let conformance: Conformance;
let admin: Client;
/** not recorded: set-up through other areas' routes */
let setup: Client;
let me: { accountId: string; deviceId: string | null; publicKey: string; accountRootPublicKey?: string };

/** An account with no node: its root certifies devices (credential + scope proof) and one signs a join. */
function keyholder(namespaceId: string) {
  const root = generateKeyPair('ed25519');
  const signRoot = (m: Uint8Array) => ed25519Sign(privateKeyObject(root.privateKey), m);
  const account = accountIdOf(Buffer.from(root.publicKey, 'hex'));
  const newDevice = () => {
    const key = generateKeyPair('ed25519');
    const deviceId = deviceIdOf(account, randomBytes(16));
    const credential = encodeCredential({ rootPublicKey: root.publicKey, deviceId, signPublicKey: key.publicKey, kemPublicKey: key.publicKey, deviceEpoch: 0 }, signRoot);
    const scope = encodeScopeProof({ rootPublicKey: root.publicKey, deviceId, scopeEpoch: 0, applications: 'all' }, signRoot);
    return { deviceId, key, credential, scope };
  };
  const first = newDevice();
  const statement = { kind: 'MemberJoined', namespaceId, groupId: namespaceId, account, signer: first.key.publicKey, timestampMs: Date.now() };
  const signature = ed25519Sign(privateKeyObject(first.key.privateKey), joinDigest(statement));
  return { account, first, newDevice, signedOp: encodeSignedJoin({ statement, credential: first.credential, signature }) };
}

beforeAll(async () => {
  ({ node, conformance, client: admin, setup } = await startConformanceNode());
  me = await setup.accounts.identity();
});
afterAll(() => node.destroy());

it('founds, reads, lists and deletes namespaces, and manages their subgroups, as documented', async () => {
  const created = await admin.namespaces.create({ applicationId: APP, name: 'project' });
  expect(created.founding.founderAccountId).toBe(me.accountId);
  const ns = await admin.namespaces.get(created.namespaceId);
  expect(ns).toMatchObject({ namespaceId: created.namespaceId, targetApplicationId: APP, name: 'project', memberCount: 1, subgroupCount: 0, founding: created.founding });
  expect((await admin.namespaces.list()).map((n) => n.namespaceId)).toContain(created.namespaceId);
  expect((await httpError(admin.namespaces.get('f'.repeat(64)))).status).toBe(404);

  const other = await admin.namespaces.create({ applicationId: APP2 });
  expect((await admin.namespaces.forApplication(APP2)).map((n) => n.namespaceId)).toEqual([other.namespaceId]);
  expect((await httpError(admin.namespaces.forApplication('nope'))).status).toBe(400);

  const open = await admin.namespaces.createGroup(created.namespaceId, { groupName: 'team' });
  const closed = await admin.namespaces.createGroup(created.namespaceId, { visibility: 'restricted' });
  expect(await admin.namespaces.groups(created.namespaceId)).toEqual(
    expect.arrayContaining([{ groupId: open.groupId, name: 'team' }, { groupId: closed.groupId }]),
  );
  expect((await httpError(admin.namespaces.createGroup(open.groupId))).status).toBe(400);
  expect((await admin.namespaces.get(created.namespaceId)).subgroupCount).toBe(2);

  expect(await admin.namespaces.delete(other.namespaceId)).toEqual({ isDeleted: true });
  expect((await admin.namespaces.list()).map((n) => n.namespaceId)).not.toContain(other.namespaceId);
  expect((await httpError(admin.namespaces.delete(other.namespaceId))).status).toBe(404);
});

it('invites, joins and admits, revokes and links devices, changes the admin and leaves, as documented', async () => {
  const { namespaceId } = await admin.namespaces.create({ applicationId: APP, name: 'shared' });
  const sub = await admin.namespaces.createGroup(namespaceId, { groupName: 'inner' });

  const single = await admin.invitations.inviteToNamespace(namespaceId, { expirationTimestamp: 600 });
  expect(single.groupName).toBe('shared');
  expect(single.invitation.invitation.admitters).toEqual([me.accountId]);
  expect(single.invitation.inviter_account).toBe(me.accountId);
  const recursive = await admin.invitations.inviteToNamespace(namespaceId, { recursive: true });
  expect(recursive.invitations.map((i) => i.groupId).sort()).toEqual([namespaceId, sub.groupId].sort());
  expect((await httpError(admin.invitations.inviteToNamespace(sub.groupId))).status).toBe(400);

  expect(await admin.invitations.joinNamespace(namespaceId, single.invitation)).toEqual({
    namespaceId,
    groupId: namespaceId, // the compatibility alias (docs/decisions.md)
    memberIdentity: me.publicKey,
    memberAccount: me.accountId,
  });
  expect((await httpError(admin.invitations.joinNamespace(sub.groupId, single.invitation))).status).toBe(400);

  const joiner = keyholder(namespaceId);
  expect((await httpError(admin.namespaces.admit(namespaceId, { invitation: single.invitation, signedOp: 'deadbeef' }))).status).toBe(400);
  expect(await admin.namespaces.admit(namespaceId, { invitation: single.invitation, signedOp: joiner.signedOp })).toEqual({ published: true });
  expect((await setup.groups.members(namespaceId)).map((m) => m.identity)).toContain(joiner.account);

  // the admitted join carried the joiner's first device; a second one is linked by this member
  const first = { credential: joiner.first.credential, scope: joiner.first.scope };
  expect(await admin.namespaces.linkDevice(namespaceId, first)).toEqual({ accountId: joiner.account, deviceId: joiner.first.deviceId, alreadyBound: true });
  const second = joiner.newDevice();
  const linked = await admin.namespaces.linkDevice(namespaceId, { credential: second.credential, scope: second.scope });
  expect(linked).toEqual({ accountId: joiner.account, deviceId: second.deviceId, alreadyBound: false });
  expect((await httpError(admin.namespaces.linkDevice(namespaceId, { credential: '', scope: second.scope }))).status).toBe(400);

  const offer = await setup.accounts.pairInit({ accountRootPublicKey: me.accountRootPublicKey!, namespaces: [namespaceId] });
  await setup.accounts.pairComplete(offer);
  const revoked = await admin.namespaces.revokeDevice(namespaceId, { deviceId: offer.deviceId });
  expect(revoked).toMatchObject({ accountId: me.accountId, deviceId: offer.deviceId, keyRotated: false });
  expect(revoked.revokedIn.map((r) => r.namespaceId)).toContain(namespaceId);
  expect((await httpError(admin.namespaces.revokeDevice(namespaceId, { deviceId: me.deviceId! }))).status).toBe(403);
  expect((await httpError(admin.namespaces.revokeDevice(namespaceId, { deviceId: offer.deviceId }))).status).toBe(409);

  const counter = BigInt((await setup.groups.info(namespaceId)).ownerOpCounter);
  await admin.owner.changeNamespaceAdmin(namespaceId, { newAdmin: me.accountId });
  expect(BigInt((await setup.groups.info(namespaceId)).ownerOpCounter)).toBe(counter + 1n);
  expect((await httpError(admin.owner.changeNamespaceAdmin(namespaceId, { newAdmin: me.accountId, rootProof: '' }))).status).toBe(400);

  // the owner cannot leave; once ownership is handed to another admin, this node's account can
  expect((await httpError(admin.namespaces.leave(namespaceId))).status).toBe(403);
  const handed = (await admin.namespaces.create({ applicationId: APP, name: 'handed over' })).namespaceId;
  await setup.groups.addMembers(handed, [{ identity: OTHER, role: 'Admin' }]);
  await setup.owner.transferOwnership(handed, { newOwner: OTHER });
  await admin.namespaces.leave(handed);
  expect((await httpError(admin.namespaces.get(handed))).status).toBe(404);
  expect((await admin.namespaces.list()).map((n) => n.namespaceId)).not.toContain(handed);

  conformance.assertAreaCovered('namespaces');
});
