/**
 * Account and devices over HTTP (admin spec "Account and devices"; admin-wire-b §3, §2.14): the
 * device listing, applications, pairing (72-byte statement, 300 s age), relink, rescope, label,
 * sign-with-root and revocation, each refusal, and restart persistence of the device registry.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPublicKey, verify } from 'node:crypto';
import type { Client } from '../../../src/client/index.ts';
import type { AccountsApi, PairInitResult } from '../../../src/client/accounts.ts';
import type { NamespacesApi } from '../../../src/client/namespaces.ts';
import { domainHash } from '../../helpers/domain-hash.ts';
import { adminClient, startTestNode, type TestNode } from '../../helpers/node.ts';
import { outcomeOf } from '../../helpers/status.ts';

const APP = 'a'.repeat(64);
const APP2 = 'b'.repeat(64);
let t = Date.UTC(2026, 0, 1);
const clock = { now: () => t };
let node: TestNode;
let c: Client;
let acc: AccountsApi;
let nss: NamespacesApi;
let id: { accountId: string; deviceId: string; publicKey: string; accountRootPublicKey: string };
let nsApp: string;
let nsApp2: string;

async function connect(): Promise<void> {
  c = await adminClient(node);
  acc = c.accounts;
  nss = c.namespaces;
}

function ed25519Ok(pubHex: string, message: Buffer, sig: Buffer): boolean {
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(pubHex, 'hex').toString('base64url') }, format: 'jwk' });
  return verify(null, message, key, sig);
}

const offer = () => acc.pairInit({ accountRootPublicKey: id.accountRootPublicKey, namespaces: [nsApp] });
const complete = (o: PairInitResult, extra: { applications?: string[]; confirmationCode?: string } = {}) =>
  acc.pairComplete({
    deviceId: o.deviceId,
    kemPublicKey: o.kemPublicKey,
    signPublicKey: o.signPublicKey,
    statement: o.statement,
    confirmationCode: extra.confirmationCode ?? o.confirmationCode,
    applications: extra.applications,
  });

beforeAll(async () => {
  node = await startTestNode({ clock });
  await connect();
  id = await c.http.data('/admin-api/identity');
});
afterAll(async () => node?.destroy());

it('GET /account/devices is flat and always lists this node\'s own device', async () => {
  const raw = await c.http.json<Record<string, unknown>>('/admin-api/account/devices');
  expect(Object.keys(raw)).toEqual(['devices']);
  expect(id).not.toHaveProperty('revokedFrom'); // no revocation has reached this node
  const [self] = await acc.devices();
  expect(self).toEqual({ deviceId: id.deviceId, signingKey: id.publicKey, isSelf: true, revoked: false, applications: [], namespaces: [], labelEpoch: 0 });
});

it('GET /account/applications is flat and derived from the namespaces the account takes part in', async () => {
  expect(await c.http.json('/admin-api/account/applications')).toEqual({ applications: [] });
  nsApp = (await nss.create({ applicationId: APP })).namespaceId;
  nsApp2 = (await nss.create({ applicationId: APP2 })).namespaceId;
  const apps = await acc.applications();
  expect(apps).toContainEqual({ applicationId: APP, namespaces: [nsApp] });
  expect(apps).toContainEqual({ applicationId: APP2, namespaces: [nsApp2] });
  const [self] = await acc.devices();
  expect(self.namespaces.sort()).toEqual([nsApp, nsApp2].sort());
});

it('pair-init answers a 72-byte timestamped statement signed by signPublicKey and a confirmation code', async () => {
  const o = await offer();
  expect(o.accountId).toBe(id.accountId);
  for (const k of [o.accountId, o.deviceId, o.kemPublicKey, o.signPublicKey]) expect(k).toMatch(/^[0-9a-f]{64}$/);
  expect(o.statement).toMatch(/^[0-9a-f]{144}$/);
  expect(o.confirmationCode).toMatch(/^[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}$/);
  const bytes = Buffer.from(o.statement, 'hex');
  const issued = bytes.subarray(0, 8);
  expect(bytes.readBigUInt64BE(0)).toBe(BigInt(Math.floor(t / 1000)));
  const fields = [o.accountId, o.deviceId, o.kemPublicKey, o.signPublicKey].map((h) => Buffer.from(h, 'hex'));
  expect(ed25519Ok(o.signPublicKey, domainHash('calimero.device.pairing.v1', [...fields, issued]), bytes.subarray(8))).toBe(true);
  const code = domainHash('calimero.device.pairing.confirm.v1', fields).subarray(0, 8).toString('hex').toUpperCase();
  expect(o.confirmationCode.replace(/-/g, '')).toBe(code);
  expect((await outcomeOf(acc.pairInit({ accountRootPublicKey: 'abc', namespaces: [nsApp] }))).status).toBe(400);
  expect((await outcomeOf(acc.pairInit({ accountRootPublicKey: id.accountRootPublicKey, namespaces: [] }))).status).toBe(400);
  expect((await outcomeOf(acc.pairInit({ accountRootPublicKey: id.accountRootPublicKey, namespaces: ['zz'] }))).status).toBe(400);
  expect((await acc.pairInit({ accountRootPublicKey: id.accountRootPublicKey, namespaces: [], accountNamespace: nsApp })).statement).toHaveLength(144);
});

it('pair-complete refuses a wrong code, a statement older than 300 s or from the future, bad widths and a blank code', async () => {
  const o = await offer();
  const wrong = await outcomeOf(complete(o, { confirmationCode: '0000-0000-0000-0000' }));
  expect(wrong.status).toBe(400);
  expect(wrong.text).not.toContain(o.confirmationCode);
  expect((await outcomeOf(complete(o, { confirmationCode: '  ' }))).status).toBe(400);
  expect((await outcomeOf(acc.pairComplete({ ...o, statement: o.statement.slice(0, 128) }))).status).toBe(400);
  expect((await outcomeOf(acc.pairComplete({ ...o, deviceId: o.statement }))).status).toBe(400);
  const tampered = o.statement.slice(0, 20) + (o.statement[20] === '0' ? '1' : '0') + o.statement.slice(21);
  expect((await outcomeOf(acc.pairComplete({ ...o, statement: tampered }))).status).toBe(400);
  t += 301_000;
  const stale = await outcomeOf(complete(o));
  expect(stale.status).toBe(400);
  expect(stale.text).toContain('300');
  const fresh = await offer();
  t -= 120_000;
  const future = await outcomeOf(complete(fresh));
  expect(future.status).toBe(400);
  expect(future.text).toContain('future');
  t += 120_000;
});

let scoped: PairInitResult;
it('pair-complete certifies the device, binds it where its scope reaches and lists it', async () => {
  const o = await offer();
  const done = await complete(o);
  expect(done).toMatchObject({ accountId: id.accountId, deviceId: o.deviceId, confirmationCode: o.confirmationCode, keyDelivered: false });
  expect(done.credential).toMatch(/^01[0-9a-f]+$/);
  scoped = await offer();
  await complete(scoped, { applications: [APP2] });
  const devices = await acc.devices();
  expect(devices.filter((d) => d.isSelf)).toHaveLength(1);
  const all = devices.find((d) => d.deviceId === o.deviceId)!;
  expect(all).toMatchObject({ signingKey: o.signPublicKey, isSelf: false, revoked: false, applications: [], labelEpoch: 0 });
  expect(all.namespaces.sort()).toEqual([nsApp, nsApp2].sort());
  expect(devices.find((d) => d.deviceId === scoped.deviceId)).toMatchObject({ applications: [APP2], namespaces: [nsApp2] });
});

it('relink is add-only; an empty list widens to every application; unknown device 404', async () => {
  const r = await acc.relink(scoped.deviceId, [APP]);
  expect(r.applications.sort()).toEqual([APP, APP2].sort());
  expect(r.linkedIn).toEqual([{ namespaceId: nsApp, keyDelivered: false }]);
  expect(r.skipped).toEqual([{ namespaceId: nsApp2, reason: 'alreadyBound' }]);
  const wide = await acc.relink(scoped.deviceId);
  expect(wide.applications).toEqual([]);
  const bare = await c.http.data<{ applications: string[] }>(`/admin-api/account/devices/${scoped.deviceId}/relink`, { method: 'POST' });
  expect(bare.applications).toEqual([]);
  const own = await acc.relink(id.deviceId);
  expect(own.skipped.every((s) => s.reason === 'ownDevice')).toBe(true);
  expect((await outcomeOf(acc.relink('0'.repeat(64)))).status).toBe(404);
  const bad = await outcomeOf(acc.relink('xyz'));
  expect(bad.status).toBe(400);
  expect(bad.text).toContain('deviceId must be 64 hex');
});

it('PUT scope replaces the scope and reports descoped namespaces; refusals 400/403/404', async () => {
  const narrowed = await acc.setScope(scoped.deviceId, { only: [APP2] });
  expect(narrowed.applications).toEqual([APP2]);
  expect(narrowed.descoped).toEqual([{ namespaceId: nsApp, keyRotated: false }]);
  expect((await acc.devices()).find((d) => d.deviceId === scoped.deviceId)!.namespaces).toEqual([nsApp2]);
  const all = await acc.setScope(scoped.deviceId, 'all');
  expect(all.applications).toEqual([]);
  expect(all.linkedIn).toEqual([{ namespaceId: nsApp, keyDelivered: false }]);
  const empty = await outcomeOf(acc.setScope(scoped.deviceId, { only: [] }));
  expect(empty.status).toBe(400);
  expect((await outcomeOf(acc.setScope(scoped.deviceId, 'some' as never))).status).toBe(400);
  expect((await outcomeOf(acc.setScope(scoped.deviceId, { only: ['nope'] }))).status).toBe(400);
  const unknownApp = await outcomeOf(acc.setScope(scoped.deviceId, { only: [APP2, 'c'.repeat(64)] }));
  expect(unknownApp.status).toBe(400);
  expect(unknownApp.text).toContain(`unknown application ${'c'.repeat(64)}`);
  expect((await outcomeOf(acc.setScope(id.deviceId, 'all'))).status).toBe(403);
  expect((await outcomeOf(acc.setScope('0'.repeat(64), 'all'))).status).toBe(404);
});

it('PUT label names a device and advances labelEpoch; refusals 400/404/409/429', async () => {
  expect(await acc.setLabel(id.deviceId, '  Work laptop ')).toEqual({ accountId: id.accountId, deviceId: id.deviceId, label: 'Work laptop', labelEpoch: 1 });
  // renames of one device wait 10 s on each other, as the reference's
  t += 4_000;
  const tooSoon = await outcomeOf(acc.setLabel(id.deviceId, 'Desk'));
  expect(tooSoon.status).toBe(429);
  expect(tooSoon.text).toContain('renamed less than 10s ago');
  t += 6_000;
  expect((await acc.setLabel(id.deviceId, 'Desk')).labelEpoch).toBe(2);
  expect((await acc.devices())[0]).toMatchObject({ isSelf: true, label: 'Desk', labelEpoch: 2 });
  expect((await outcomeOf(acc.setLabel(id.deviceId, '   '))).status).toBe(400);
  expect((await outcomeOf(acc.setLabel(id.deviceId, 'a\u0001b'))).status).toBe(400);
  expect((await outcomeOf(acc.setLabel(id.deviceId, 'x'.repeat(65)))).status).toBe(400);
  expect((await outcomeOf(acc.setLabel('0'.repeat(64), 'x'))).status).toBe(404);
  expect((await outcomeOf(acc.setLabel(scoped.deviceId, 'desk'))).status).toBe(409);
});

it('sign-with-root signs domain bytes ‖ challenge with the account root (base64); `payload` is accepted too', async () => {
  const challenge = Buffer.from('hello challenge');
  const r = await acc.signWithRoot({ domain: 'mdma.account-login', text: challenge.toString('hex') });
  expect(r).toMatchObject({ rootPublicKey: id.accountRootPublicKey, accountId: id.accountId });
  const sig = Buffer.from(r.signature, 'base64');
  expect(sig).toHaveLength(64);
  const msg = Buffer.concat([Buffer.from('calimero.mdma.account-login.v1\0'), challenge]);
  expect(ed25519Ok(id.accountRootPublicKey, msg, sig)).toBe(true);
  const viaPayload = await c.http.data<{ signature: string }>('/admin-api/account/sign-with-root', {
    method: 'POST',
    body: { domain: 'mdma.account-link', payload: challenge.toString('hex') },
  });
  expect(ed25519Ok(id.accountRootPublicKey, Buffer.concat([Buffer.from('calimero.mdma.account-link.v1\0'), challenge]), Buffer.from(viaPayload.signature, 'base64'))).toBe(true);
  const badDomain = await outcomeOf(acc.signWithRoot({ domain: 'other', text: 'ab' }));
  expect(badDomain.status).toBe(400);
  expect(badDomain.text).toContain('mdma.account-recovery');
  expect((await outcomeOf(acc.signWithRoot({ domain: 'mdma.account-login', text: 'abc' }))).status).toBe(400);
  expect((await outcomeOf(c.http.send('/admin-api/account/sign-with-root', { method: 'POST', body: { domain: 'mdma.account-login' } }))).status).toBe(400);
});

it('revoke withdraws a device in every namespace (keyRotated per namespace); it stays listed as revoked', async () => {
  const r = await nss.revokeDevice(nsApp, { deviceId: scoped.deviceId });
  expect(r).toMatchObject({ accountId: id.accountId, deviceId: scoped.deviceId, keyRotated: false });
  expect(r.revokedIn.map((x) => x.namespaceId).sort()).toEqual([nsApp, nsApp2].sort());
  expect(r.revokedIn.every((x) => x.keyRotated === false)).toBe(true);
  const listed = (await acc.devices()).find((d) => d.deviceId === scoped.deviceId)!;
  expect(listed).toMatchObject({ revoked: true, namespaces: [] });
  expect((await outcomeOf(nss.revokeDevice(nsApp, { deviceId: scoped.deviceId }))).status).toBe(409);
  expect((await outcomeOf(acc.setScope(scoped.deviceId, 'all'))).status).toBe(403);
  expect((await acc.relink(scoped.deviceId)).skipped.every((s) => s.reason === 'revoked')).toBe(true);
  t += 1000;
  expect((await outcomeOf(complete(await offer()))).status).toBe(200);
});

it('the device registry, labels, scopes and revocations survive a restart', async () => {
  const before = await acc.devices();
  node = await node.restart();
  await connect();
  expect(await acc.devices()).toEqual(before);
});
