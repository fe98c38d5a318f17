/**
 * Namespace management over HTTP (admin spec "Namespaces"; admin-wire-b §2.5, §2.6, §2.9, §2.11,
 * §2.12, §2.14): delete, for-application, leave, subgroups in a namespace, account revoke; each
 * refusal, the account session's scope (404) and restart persistence.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Client } from '../../../src/client/index.ts';
import type { NamespacesApi } from '../../../src/client/namespaces.ts';
import { adminClient, startTestNode, type TestNode } from '../../helpers/node.ts';
import { outcomeOf } from '../../helpers/status.ts';
import { randomBytes } from 'node:crypto';
import { accountIdOf, deviceIdOf } from '../../../src/crypto/ids.ts';
import { ed25519Sign, generateKeyPair, privateKeyObject } from '../../../src/crypto/keys.ts';
import { encodeCredential } from '../../../src/identity/pairing.ts';
import { encodeScopeProof } from '../../../src/identity/credentials.ts';
import { encodeSignedJoin, joinDigest, type JoinStatement } from '../../../src/governance/namespaces/manage-admit.ts';

const APP = 'a'.repeat(64);
const APP2 = 'b'.repeat(64);
const OTHER = 'e'.repeat(64);
let node: TestNode;
let c: Client;
let api: NamespacesApi;
let me: string;

async function connect(): Promise<void> {
  c = await adminClient(node);
  api = c.namespaces;
}

/** A namespace this node's account no longer owns: OTHER becomes admin and owner. */
async function handedOver(app = APP): Promise<string> {
  const { namespaceId } = await api.create({ applicationId: app, name: 'handed-over' });
  await c.http.send(`/admin-api/groups/${namespaceId}/members`, { method: 'POST', body: { members: [{ identity: OTHER, role: 'Admin' }] } });
  await c.http.send(`/admin-api/groups/${namespaceId}/transfer-ownership`, { method: 'POST', body: { newOwner: OTHER } });
  return namespaceId;
}

beforeAll(async () => {
  node = await startTestNode();
  await connect();
  me = (await c.http.data<{ accountId: string }>('/admin-api/identity')).accountId;
});
afterAll(async () => node?.destroy());

it('DELETE /namespaces/{ns} answers {isDeleted:true}, with or without a body, and forgets the namespace', async () => {
  const a = await api.create({ applicationId: APP, name: 'doomed' });
  expect(await api.delete(a.namespaceId)).toEqual({ isDeleted: true });
  expect((await api.list()).map((n) => n.namespaceId)).not.toContain(a.namespaceId);
  expect((await outcomeOf(api.get(a.namespaceId))).status).toBe(404);
  expect((await outcomeOf(c.http.send(`/admin-api/groups/${a.namespaceId}`))).status).toBe(404);

  const b = await api.create({ applicationId: APP });
  const withBody = await c.http.data<{ isDeleted: boolean }>(`/admin-api/namespaces/${b.namespaceId}`, { method: 'DELETE', body: {} });
  expect(withBody.isDeleted).toBe(true);
});

it('DELETE /namespaces/{ns} refuses: unknown 404, bad id 400, a non-admin 403', async () => {
  expect((await outcomeOf(api.delete('f'.repeat(64)))).status).toBe(404);
  expect((await outcomeOf(api.delete('not-an-id'))).status).toBe(400);
  const ns = await handedOver();
  await c.http.send(`/admin-api/groups/${ns}/members/${me}/role`, { method: 'PUT', body: { role: 'Member' } });
  const refused = await outcomeOf(api.delete(ns));
  expect(refused.status).toBe(403);
  expect(refused.text).toContain('admin');
  expect((await api.get(ns)).namespaceId).toBe(ns);
});

it('GET /namespaces/for-application/{app} lists exactly that application\'s namespaces', async () => {
  const x = await api.create({ applicationId: APP2, name: 'x' });
  const y = await api.create({ applicationId: APP2, name: 'y' });
  const listed = await api.forApplication(APP2);
  expect(listed.map((n) => n.namespaceId).sort()).toEqual([x.namespaceId, y.namespaceId].sort());
  expect(listed[0]).toMatchObject({ targetApplicationId: APP2, memberCount: 1 });
  expect(await api.forApplication('c'.repeat(64))).toEqual([]);
  expect((await outcomeOf(api.forApplication('nope'))).status).toBe(400);
});

it('POST/GET /namespaces/{ns}/groups create subgroups (derived ids, open by default) and list them', async () => {
  const { namespaceId } = await api.create({ applicationId: APP, name: 'tree' });
  const open = await api.createGroup(namespaceId, { groupName: 'open one' });
  const restricted = await api.createGroup(namespaceId, { groupName: 'closed', visibility: 'restricted' });
  const bare = await c.http.data<{ groupId: string }>(`/admin-api/namespaces/${namespaceId}/groups`, { method: 'POST' });
  const legacy = await api.createGroup(namespaceId, { alias: 'old' } as never);
  for (const g of [open, restricted, bare, legacy]) expect(g.groupId).toMatch(/^[0-9a-f]{64}$/);
  const info = await c.http.data<{ subgroupVisibility: string; namespaceId: string }>(`/admin-api/groups/${open.groupId}`);
  expect(info).toMatchObject({ subgroupVisibility: 'open', namespaceId });
  const rInfo = await c.http.data<{ subgroupVisibility: string }>(`/admin-api/groups/${restricted.groupId}`);
  expect(rInfo.subgroupVisibility).toBe('restricted');
  const listed = await api.groups(namespaceId);
  expect(listed).toContainEqual({ groupId: open.groupId, name: 'open one' });
  expect(listed).toContainEqual({ groupId: restricted.groupId, name: 'closed' });
  expect(listed).toContainEqual({ groupId: bare.groupId });
  expect(listed).toContainEqual({ groupId: legacy.groupId, name: 'old' });
  expect(listed.map((g) => g.groupId)).not.toContain(namespaceId);
  expect((await api.get(namespaceId)).subgroupCount).toBe(4);
});

it('POST /namespaces/{ns}/groups refuses: groupId/bad visibility 400, non-root 400, unknown 404, no capability 403', async () => {
  const { namespaceId } = await api.create({ applicationId: APP });
  expect((await outcomeOf(c.http.send(`/admin-api/namespaces/${namespaceId}/groups`, { method: 'POST', body: { groupId: 'b'.repeat(64) } }))).status).toBe(400);
  expect((await outcomeOf(api.createGroup(namespaceId, { visibility: 'secret' as never }))).status).toBe(400);
  const sub = await api.createGroup(namespaceId);
  const nonRoot = await outcomeOf(api.createGroup(sub.groupId));
  expect(nonRoot.status).toBe(400);
  expect(nonRoot.text).toContain('root group');
  expect((await outcomeOf(api.createGroup('f'.repeat(64)))).status).toBe(404);
  expect((await outcomeOf(api.groups('f'.repeat(64)))).status).toBe(404);
  const ns = await handedOver();
  await c.http.send(`/admin-api/groups/${ns}/members/${me}/role`, { method: 'PUT', body: { role: 'Member' } });
  const refused = await outcomeOf(api.createGroup(ns));
  expect(refused.status).toBe(403);
  expect(refused.text).toContain('CAN_CREATE_SUBGROUP');
});

it('POST /namespaces/{ns}/leave: the owner cannot leave (403); a member leaves and the namespace drops out of scope (404)', async () => {
  const owned = await api.create({ applicationId: APP });
  const refused = await outcomeOf(api.leave(owned.namespaceId));
  expect(refused.status).toBe(403);
  expect(refused.text).toContain('owner');
  expect((await outcomeOf(api.leave('f'.repeat(64)))).status).toBe(404);

  const ns = await handedOver();
  const sub = await api.createGroup(ns);
  expect((await outcomeOf(api.leave(ns))).status).toBe(409); // owns a subgroup
  await c.http.send(`/admin-api/groups/${sub.groupId}`, { method: 'DELETE', body: {} });
  const res = await c.http.send(`/admin-api/namespaces/${ns}/leave`, { method: 'POST', body: { requester: me } });
  expect(res.status).toBe(200);
  expect(res.bodyText).toBe('');
  expect((await outcomeOf(api.get(ns))).status).toBe(404);
  expect((await outcomeOf(api.groups(ns))).status).toBe(404);
  expect((await outcomeOf(api.leave(ns))).status).toBe(404);
  expect((await api.list()).map((n) => n.namespaceId)).not.toContain(ns);
});

it('POST /namespaces/{ns}/account/revoke refuses: own device 403, unknown device 404, bad body 400, out of scope 404', async () => {
  const { namespaceId } = await api.create({ applicationId: APP });
  const self = (await c.http.data<{ deviceId: string }>('/admin-api/identity')).deviceId;
  const own = await outcomeOf(api.revokeDevice(namespaceId, { deviceId: self }));
  expect(own.status).toBe(403);
  expect((await outcomeOf(api.revokeDevice(namespaceId, { deviceId: '0'.repeat(64) }))).status).toBe(404);
  expect((await outcomeOf(api.revokeDevice(namespaceId, { deviceId: 'xyz' }))).status).toBe(400);
  expect((await outcomeOf(api.revokeDevice(namespaceId, { deviceId: '0'.repeat(64), proof: '' }))).status).toBe(400);
  expect((await outcomeOf(api.revokeDevice('f'.repeat(64), { deviceId: '0'.repeat(64) }))).status).toBe(404);
});

/** A device of a foreign account X: its credential and scope proof, signed by X's root. */
function foreignDevice(applications: string[] | 'all') {
  const root = generateKeyPair('ed25519');
  const sign = (m: Uint8Array) => ed25519Sign(privateKeyObject(root.privateKey), m);
  const account = accountIdOf(Buffer.from(root.publicKey, 'hex'));
  const deviceId = deviceIdOf(account, randomBytes(16));
  const key = generateKeyPair('ed25519').publicKey;
  const credential = encodeCredential({ rootPublicKey: root.publicKey, deviceId, signPublicKey: key, kemPublicKey: key, deviceEpoch: 0 }, sign);
  const scope = encodeScopeProof({ rootPublicKey: root.publicKey, deviceId, scopeEpoch: 0, applications }, sign);
  return { account, deviceId, credential, scope };
}

let linkedNs: string;
let linked: ReturnType<typeof foreignDevice>;
it('POST /namespaces/{ns}/account/link-device binds a member account\'s device from its proofs; refusals 400/403/404', async () => {
  const { namespaceId } = await api.create({ applicationId: APP });
  linkedNs = namespaceId;
  linked = foreignDevice('all');
  const stranger = await outcomeOf(api.linkDevice(namespaceId, { credential: linked.credential, scope: linked.scope }));
  expect(stranger.status).toBe(403);
  expect(stranger.text).toContain('DeviceLinkRefused');
  await c.http.send(`/admin-api/groups/${namespaceId}/members`, { method: 'POST', body: { members: [{ identity: linked.account, role: 'Member' }] } });
  expect(await api.linkDevice(namespaceId, { credential: linked.credential, scope: linked.scope })).toEqual({ accountId: linked.account, deviceId: linked.deviceId, alreadyBound: false });
  expect((await api.linkDevice(namespaceId, { credential: linked.credential, scope: linked.scope })).alreadyBound).toBe(true);

  expect((await outcomeOf(api.linkDevice(namespaceId, { credential: '', scope: linked.scope }))).status).toBe(400);
  expect((await outcomeOf(api.linkDevice(namespaceId, { credential: '02aa', scope: 'bb' }))).status).toBe(400);
  const flipped = linked.credential.slice(0, -2) + (linked.credential.endsWith('00') ? '01' : '00');
  expect((await outcomeOf(api.linkDevice(namespaceId, { credential: flipped, scope: linked.scope }))).status).toBe(400);
  const other = foreignDevice('all');
  expect((await outcomeOf(api.linkDevice(namespaceId, { credential: linked.credential, scope: other.scope }))).status).toBe(400);
  const narrow = foreignDevice([APP2]);
  await c.http.send(`/admin-api/groups/${namespaceId}/members`, { method: 'POST', body: { members: [{ identity: narrow.account, role: 'Member' }] } });
  const out = await outcomeOf(api.linkDevice(namespaceId, { credential: narrow.credential, scope: narrow.scope }));
  expect(out.status).toBe(403);
  expect(out.text).toContain('scope');
  expect((await outcomeOf(api.linkDevice('f'.repeat(64), { credential: linked.credential, scope: linked.scope }))).status).toBe(404);
});

/** A keyholder with no node: an account root, a device credential, and its self-signed join. */
function keyholder(namespaceId: string, over: Partial<JoinStatement> = {}) {
  const root = generateKeyPair('ed25519');
  const device = generateKeyPair('ed25519');
  const account = accountIdOf(Buffer.from(root.publicKey, 'hex'));
  const credential = encodeCredential(
    { rootPublicKey: root.publicKey, deviceId: deviceIdOf(account, randomBytes(16)), signPublicKey: device.publicKey, kemPublicKey: device.publicKey, deviceEpoch: 0 },
    (m) => ed25519Sign(privateKeyObject(root.privateKey), m),
  );
  const statement: JoinStatement = { kind: 'MemberJoined', namespaceId, groupId: namespaceId, account, signer: device.publicKey, timestampMs: Date.now(), ...over };
  const signature = ed25519Sign(privateKeyObject(device.privateKey), joinDigest(statement));
  return { account, signedOp: encodeSignedJoin({ statement, credential, signature }) };
}

it('POST /namespaces/{ns}/admit publishes a keyholder\'s self-signed join; each refusal in the wire\'s order', async () => {
  const { namespaceId } = await api.create({ applicationId: APP });
  const { invitation } = await c.http.data<{ invitation: Record<string, unknown> }>(`/admin-api/namespaces/${namespaceId}/invite`, { method: 'POST', body: {} });
  const k = keyholder(namespaceId);
  const admit = (body: Record<string, unknown>, ns = namespaceId) => outcomeOf(api.admit(ns, body as never));

  expect((await admit({ invitation, signedOp: '' })).status).toBe(400);
  const garbage = await admit({ invitation, signedOp: 'deadbeef' });
  expect(garbage.status).toBe(400);
  const other = await api.create({ applicationId: APP });
  expect((await admit({ invitation, signedOp: k.signedOp }, other.namespaceId)).text).toContain('does not match');
  expect((await admit({ invitation, signedOp: keyholder(other.namespaceId).signedOp })).status).toBe(400);
  expect((await admit({ invitation, signedOp: keyholder(namespaceId, { kind: 'MemberRemoved' }).signedOp })).text).toContain('not a member join');
  const forged = JSON.parse(Buffer.from(k.signedOp, 'hex').toString());
  forged.statement.timestampMs += 1;
  const badSig = await admit({ invitation, signedOp: Buffer.from(JSON.stringify(forged)).toString('hex') });
  expect(badSig.status).toBe(400);
  expect(badSig.text).toContain('signature');

  const notMine = await c.http.data<{ invitation: Record<string, unknown> }>(`/admin-api/namespaces/${namespaceId}/invite`, { method: 'POST', body: { admitters: [OTHER] } });
  expect((await admit({ invitation: notMine.invitation, signedOp: k.signedOp })).status).toBe(403);
  const tampered = structuredClone(invitation) as { invitation: { expiration_timestamp: number } };
  tampered.invitation.expiration_timestamp += 1;
  const rejected = await admit({ invitation: tampered, signedOp: k.signedOp });
  expect(rejected.status).toBe(403);
  expect(rejected.text).toContain('invitation rejected');
  expect((await admit({ invitation, signedOp: k.signedOp }, 'f'.repeat(64))).status).toBe(404);

  expect(await api.admit(namespaceId, { invitation, signedOp: k.signedOp })).toEqual({ published: true });
  const members = await c.http.json<{ members: { identity: string; role: string }[] }>(`/admin-api/groups/${namespaceId}/members`);
  expect(members.members).toContainEqual(expect.objectContaining({ identity: k.account, role: 'Member' }));
  const again = await admit({ invitation, signedOp: k.signedOp });
  expect(again.status).toBe(400);
  expect(again.text).toContain('refused on apply');
});

it('namespace state, deletions and leaves survive a restart', async () => {
  const kept = await api.create({ applicationId: APP, name: 'kept' });
  const g = await api.createGroup(kept.namespaceId, { groupName: 'child' });
  const gone = await api.create({ applicationId: APP, name: 'gone' });
  await api.delete(gone.namespaceId);
  const left = await handedOver();
  await api.leave(left);
  node = await node.restart();
  await connect();
  expect(await api.groups(kept.namespaceId)).toEqual([{ groupId: g.groupId, name: 'child' }]);
  const ids = (await api.list()).map((n) => n.namespaceId);
  expect(ids).toContain(kept.namespaceId);
  expect(ids).not.toContain(gone.namespaceId);
  expect(ids).not.toContain(left);
  expect((await outcomeOf(api.get(left))).status).toBe(404);
  expect((await api.linkDevice(linkedNs, { credential: linked.credential, scope: linked.scope })).alreadyBound).toBe(true);
});
