/**
 * Conformance: the node identity and the account and devices routes (admin spec "NodeIdentity",
 * "Account and devices"; admin-wire-b §3) through the SDK, on one node that is both the new
 * device (pair-init) and the root holder (pair-complete), with every answer and documented
 * refusal checked against the node's OpenAPI document.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Client } from '../../src/client/index.ts';
import { ed25519Verify } from '../../src/crypto/keys.ts';
import { Conformance } from '../helpers/conformance.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { httpError } from '../helpers/status.ts';

const APP = 'a'.repeat(64);
const APP2 = 'b'.repeat(64);
let node: TestNode;
let conformance: Conformance;
let admin: Client;

beforeAll(async () => {
  node = await startTestNode();
  conformance = await Conformance.load(node.url);
  admin = conformance.client();
  await admin.auth.login({ username: node.adminUser, password: node.adminPassword });
});
afterAll(() => node.destroy());

it('answers the identity, device listing and application routes as documented', async () => {
  const id = await admin.accounts.identity();
  expect(id).toMatchObject({ holdsAccountRoot: true, deviceCertified: true });
  expect(id.deviceId).toMatch(/^[0-9a-f]{64}$/);
  expect(id).not.toHaveProperty('revokedFrom');

  const fresh = await admin.contexts.newIdentity();
  expect(fresh).toMatch(/^[0-9a-f]{64}$/);
  expect(fresh).not.toBe(id.publicKey);

  expect(await admin.accounts.applications()).toEqual([]);
  const ns = (await admin.namespaces.create({ applicationId: APP })).namespaceId;
  expect(await admin.accounts.applications()).toEqual([{ applicationId: APP, namespaces: [ns] }]);

  const devices = await admin.accounts.devices();
  expect(devices).toEqual([
    { deviceId: id.deviceId, signingKey: id.publicKey, isSelf: true, revoked: false, applications: [], namespaces: [ns], labelEpoch: 0 },
  ]);
});

it('pairs a device, relinks, rescopes and labels it, and signs with the root, as documented', async () => {
  const id = await admin.accounts.identity();
  const [nsApp] = (await admin.accounts.applications()).map((a) => a.namespaces[0]);
  const nsApp2 = (await admin.namespaces.create({ applicationId: APP2 })).namespaceId;

  const offer = await admin.accounts.pairInit({ accountRootPublicKey: id.accountRootPublicKey!, namespaces: [nsApp] });
  expect(offer.accountId).toBe(id.accountId);
  expect((await httpError(admin.accounts.pairInit({ accountRootPublicKey: 'abc', namespaces: [nsApp] }))).status).toBe(400);

  const wrong = await httpError(admin.accounts.pairComplete({ ...offer, confirmationCode: '0000-0000-0000-0000' }));
  expect(wrong.status).toBe(400);
  expect(wrong.bodyText).not.toContain(offer.confirmationCode);
  const paired = await admin.accounts.pairComplete({ ...offer, applications: [APP2] });
  expect(paired).toMatchObject({ accountId: id.accountId, deviceId: offer.deviceId, confirmationCode: offer.confirmationCode, keyDelivered: false });
  const listed = (await admin.accounts.devices()).find((d) => d.deviceId === offer.deviceId);
  expect(listed).toMatchObject({ isSelf: false, revoked: false, applications: [APP2], namespaces: [nsApp2] });

  const relinked = await admin.accounts.relink(offer.deviceId, [APP]);
  expect(relinked.applications.sort()).toEqual([APP, APP2].sort());
  expect(relinked.linkedIn).toEqual([{ namespaceId: nsApp, keyDelivered: false }]);
  expect(relinked.skipped).toEqual([{ namespaceId: nsApp2, reason: 'alreadyBound' }]);
  expect((await httpError(admin.accounts.relink('0'.repeat(64)))).status).toBe(404);

  const narrowed = await admin.accounts.setScope(offer.deviceId, { only: [APP2] });
  expect(narrowed).toMatchObject({ applications: [APP2], descoped: [{ namespaceId: nsApp, keyRotated: false }] });
  expect((await admin.accounts.setScope(offer.deviceId, 'all')).linkedIn).toEqual([{ namespaceId: nsApp, keyDelivered: false }]);
  expect((await httpError(admin.accounts.setScope(offer.deviceId, { only: [] }))).status).toBe(400);
  expect((await httpError(admin.accounts.setScope(id.deviceId!, 'all'))).status).toBe(403);

  expect(await admin.accounts.setLabel(offer.deviceId, ' Phone ')).toEqual({ accountId: id.accountId, deviceId: offer.deviceId, label: 'Phone', labelEpoch: 1 });
  expect((await httpError(admin.accounts.setLabel(offer.deviceId, 'Tablet'))).status).toBe(429);
  expect((await httpError(admin.accounts.setLabel(id.deviceId!, 'phone'))).status).toBe(409);
  expect((await admin.accounts.devices()).find((d) => d.deviceId === offer.deviceId)).toMatchObject({ label: 'Phone', labelEpoch: 1 });

  const challenge = Buffer.from('log me in');
  const signed = await admin.accounts.signWithRoot({ domain: 'mdma.account-login', text: challenge.toString('hex') });
  expect(signed).toMatchObject({ rootPublicKey: id.accountRootPublicKey, accountId: id.accountId });
  const message = Buffer.concat([Buffer.from('calimero.mdma.account-login.v1\0'), challenge]);
  expect(ed25519Verify(signed.rootPublicKey, message, Buffer.from(signed.signature, 'base64'))).toBe(true);
  expect((await httpError(admin.accounts.signWithRoot({ domain: 'other', text: 'ab' }))).status).toBe(400);

  conformance.assertAreaCovered('accounts');
});
