/**
 * Capabilities, settings and metadata over HTTP through the SDK (admin spec "Capabilities,
 * settings and metadata"; admin-wire-b §6): every route, each refusal (400/403/404/409), the
 * root-guarded TEE policies and their counter, and restart persistence.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HttpError, type Client } from '../../../src/client/index.ts';
import { CAPABILITIES, SettingsApi } from '../../../src/client/settings.ts';
import { accountIdOf } from '../../../src/crypto/ids.ts';
import { ed25519Sign, generateKeyPair, privateKeyObject } from '../../../src/crypto/keys.ts';
import { OWNER_OP_KIND, signOwnerOp } from '../../../src/governance/root-guard.ts';
import { admissionOp } from '../../../src/governance/settings/tee-ops.ts';
import { validateAdmissionPolicy } from '../../../src/governance/settings/validate.ts';
import { adminClient, startTestNode, type TestNode } from '../../helpers/node.ts';

const APP = 'a'.repeat(64);
const OTHER = 'cd'.repeat(32);
const CTX = 'ef'.repeat(32);
const M = ['00'.repeat(48)];
const MEASURED = { allowedMrtd: M, allowedRtmr1: M, allowedRtmr2: M, allowedRtmr3: M };

let node: TestNode;
let c: Client;
let s: SettingsApi;
let me: string;
let ns: string;
let sub: string;

async function login() {
  c = await adminClient(node);
  s = c.settings;
}

const fails = (p: Promise<unknown>) => p.then(() => undefined, (e: HttpError) => e);
const info = (g: string) => c.http.data<Record<string, unknown>>(`/admin-api/groups/${g}`);
const namespace = async () => (await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: APP } })).namespaceId;
const subgroup = async (parent: string) =>
  (await c.http.data<{ groupId: string }>('/admin-api/groups', { method: 'POST', body: { applicationId: APP, parentGroupId: parent } })).groupId;
const addMember = (g: string, account: string, role: string) =>
  c.http.send(`/admin-api/groups/${g}/members`, { method: 'POST', body: { members: [{ identity: account, role }] } });

async function expectStatus(p: Promise<unknown>, status: number, text?: string) {
  const e = await fails(p);
  expect(e, `expected HTTP ${status}`).toBeInstanceOf(HttpError);
  expect((e as HttpError).status).toBe(status);
  if (text) expect((e as HttpError).bodyText).toContain(text);
}

beforeAll(async () => {
  node = await startTestNode();
  await login();
  me = (await c.http.data<{ accountId: string }>('/admin-api/identity')).accountId;
  ns = await namespace();
  sub = await subgroup(ns);
  await addMember(ns, OTHER, 'Member');
});
afterAll(async () => node?.destroy());

it('member capabilities: read, read-modify-write keeps every other bit, empty 200 writes', async () => {
  // inherited into the open subgroup: readable, but there is no row to set
  expect(await s.memberCapabilities(sub, OTHER)).toBe(4);
  await expectStatus(s.setMemberCapabilities(sub, OTHER, 1), 409, 'inherited');
  expect(await s.memberCapabilities(ns, OTHER)).toBe(CAPABILITIES.CAN_JOIN_OPEN_SUBGROUPS);
  expect(await s.grantMemberCapabilities(ns, OTHER, CAPABILITIES.CAN_AUTHOR_ON_BEHALF)).toBe(4 | 512);
  expect(await s.memberCapabilities(ns, OTHER)).toBe(516);
  const raw = await c.http.send(`/admin-api/groups/${ns}/members/${OTHER}/capabilities`, { method: 'PUT', body: { capabilities: 8 | 32 } });
  expect(raw.status).toBe(200);
  expect(raw.bodyText).toBe('');
  expect(await c.http.json(`/admin-api/groups/${ns}/members/${OTHER}/capabilities`)).toEqual({ data: { capabilities: 40 } });
  // without CAN_JOIN_OPEN_SUBGROUPS the open subgroup is no longer inherited
  await expectStatus(s.memberCapabilities(sub, OTHER), 404);
  await s.setMemberCapabilities(ns, OTHER, 40 | CAPABILITIES.CAN_JOIN_OPEN_SUBGROUPS);
});

it('member capabilities refusals: bad ids and masks 400, unknown member or group 404', async () => {
  await expectStatus(s.memberCapabilities(ns, 'zz'), 400, 'account id');
  await expectStatus(s.memberCapabilities('zz', OTHER), 400, 'group id');
  await expectStatus(s.setMemberCapabilities(ns, OTHER, -1), 400);
  await expectStatus(s.setMemberCapabilities(ns, OTHER, 2 ** 32), 400);
  await expectStatus(c.http.send(`/admin-api/groups/${ns}/members/${OTHER}/capabilities`, { method: 'PUT', body: { capabilities: 'x' } }), 400);
  await expectStatus(s.memberCapabilities(ns, 'b'.repeat(64)), 404);
  await expectStatus(s.setMemberCapabilities(ns, 'b'.repeat(64), 1), 404);
  await expectStatus(s.memberCapabilities('c'.repeat(64), OTHER), 404);
});

it('default capabilities and subgroup visibility show in GroupInfo', async () => {
  await s.setDefaultCapabilities(ns, 7);
  expect((await info(ns)).defaultCapabilities).toBe(7);
  expect(await s.grantDefaultCapabilities(ns, CAPABILITIES.CAN_AUTHOR_ON_BEHALF)).toBe(7 | 512);
  expect((await info(ns)).defaultCapabilities).toBe(519);
  await s.setSubgroupVisibility(sub, 'restricted');
  expect((await info(sub)).subgroupVisibility).toBe('restricted');
  await s.setSubgroupVisibility(sub, 'open');
  expect((await info(sub)).subgroupVisibility).toBe('open');
  await expectStatus(s.setSubgroupVisibility(sub, 'Open' as never), 400, `must be 'open' or 'restricted'`);
  await expectStatus(s.setDefaultCapabilities(ns, 1.5), 400);
  await expectStatus(s.setDefaultCapabilities('c'.repeat(64), 1), 404);
});

it('group and member metadata: null until set, then the record; name kept when absent; refusals', async () => {
  expect(await c.http.json(`/admin-api/groups/${sub}/metadata`)).toEqual({ data: null });
  expect(await s.groupMetadata(sub)).toBeNull();
  const before = Date.now();
  await s.setGroupMetadata(sub, { data: { team: 'core', role: 'dev' } });
  const rec = await s.groupMetadata(sub);
  expect(rec).toMatchObject({ name: null, data: { team: 'core', role: 'dev' }, updatedBy: me });
  expect(Number(rec!.updatedAt)).toBeGreaterThanOrEqual(before);
  await s.setGroupMetadata(sub, { name: 'Core team' });
  expect(await s.groupMetadata(sub)).toMatchObject({ name: 'Core team', data: {} });
  expect((await info(sub)).metadata).toMatchObject({ name: 'Core team' });
  await s.setGroupMetadata(sub, { data: { k: 'v' } });
  expect(await s.groupMetadata(sub)).toMatchObject({ name: 'Core team', data: { k: 'v' } });
  await expectStatus(s.setGroupMetadata(sub, { name: '' }), 400, 'metadata');
  await expectStatus(s.setGroupMetadata(sub, { data: { k: 'v'.repeat(4097) } }), 400, 'metadata');

  expect(await s.memberMetadata(ns, OTHER)).toBeNull();
  await s.setMemberMetadata(ns, OTHER, { name: 'other', data: { desk: '4' } });
  expect(await s.memberMetadata(ns, OTHER)).toMatchObject({ name: 'other', data: { desk: '4' }, updatedBy: me });
  await expectStatus(s.memberMetadata(ns, 'b'.repeat(64)), 404);
  await expectStatus(s.setMemberMetadata(ns, 'b'.repeat(64), {}), 404);
});

it('context metadata needs a registered context: 404 otherwise', async () => {
  await expectStatus(s.contextMetadata(sub, CTX), 404, 'not registered');
  await expectStatus(s.setContextMetadata(sub, CTX, { data: { a: 'b' } }), 404, 'not registered');
  await expectStatus(s.contextMetadata(sub, 'zz'), 400, 'context id');
});

it('TEE admission policy: flat GET, both forms, mode, the counter, and the spec refusals', async () => {
  const raw = await c.http.json<Record<string, unknown>>(`/admin-api/groups/${ns}/settings/tee-admission-policy`);
  expect(raw).toEqual({ enabled: false, allowedMrtd: [], allowedRtmr0: [], allowedRtmr1: [], allowedRtmr2: [], allowedRtmr3: [], allowedTcbStatuses: [], acceptMock: false, mode: 'replica' });
  const counter = async () => Number((await info(ns)).ownerOpCounter);
  const start = await counter();
  await s.setTeeAdmissionPolicy(ns, { ...MEASURED, acceptMock: true, allowedTcbStatuses: ['UpToDate'] });
  expect(await s.teeAdmissionPolicy(ns)).toMatchObject({ enabled: true, allowedMrtd: M, allowedRtmr0: [], acceptMock: true, mode: 'replica' });
  expect(await counter()).toBe(start + 1);
  await s.setTeeAdmissionPolicy(ns, { signedRelease: { allowedProfiles: ['locked-read-only'], minReleaseVersion: '2.3.72' }, mode: 'relay' });
  expect(await s.teeAdmissionPolicy(ns)).toMatchObject({ enabled: true, allowedMrtd: [], signedRelease: { allowedProfiles: ['locked-read-only'], minReleaseVersion: '2.3.72' }, mode: 'relay' });
  expect(await counter()).toBe(start + 2);

  // older clients' all-empty + acceptMock PUT is a 400 (spec wins)
  await expectStatus(s.setTeeAdmissionPolicy(ns, { acceptMock: true }), 400, 'allowedMrtd, allowedRtmr1, allowedRtmr2, allowedRtmr3 must not be empty');
  await expectStatus(s.setTeeAdmissionPolicy(ns, { allowedMrtd: M, signedRelease: { allowedProfiles: ['p'] } }), 400, 'allowedMrtd must be empty');
  await expectStatus(s.setTeeAdmissionPolicy(ns, { ...MEASURED, mode: 'fleet' as never }), 400, 'mode');
  await expectStatus(s.setTeeAdmissionPolicy(sub, MEASURED), 400, 'TeePolicyNotOnSubgroup');
  await expectStatus(s.setTeeAdmissionPolicy(ns, { ...MEASURED, rootProof: '' }), 400, 'rootProof: empty');
  expect(await counter()).toBe(start + 2);
});

it('TEE admission policy root guard: a stranger root 403, a stale counter 409, a client-held proof passes', async () => {
  const policy = validateAdmissionPolicy(MEASURED);
  const { digest } = admissionOp(policy);
  const counter = BigInt((await info(ns)).ownerOpCounter as number);
  const auth = (account: string, c2: bigint) => ({ account, namespaceId: ns, groupId: ns, kind: OWNER_OP_KIND.TeeAdmissionPolicy, opDigest: digest, counter: c2, keyEpoch: 0 });
  const pair = generateKeyPair('ed25519');
  const key = privateKeyObject(pair.privateKey);
  const stranger = signOwnerOp(pair.publicKey, (m) => ed25519Sign(key, m), auth(accountIdOf(Buffer.from(pair.publicKey, 'hex')), counter));
  await expectStatus(s.setTeeAdmissionPolicy(ns, { ...MEASURED, rootProof: stranger }), 403);
  // a proof minted by a client holding this account's root (the in-process node's root stands in)
  const id = node.node.identity;
  const own = (c2: bigint) => signOwnerOp(id.rootPublicKey, (m) => id.signWithRoot(m), auth(me, c2));
  await expectStatus(s.setTeeAdmissionPolicy(ns, { ...MEASURED, rootProof: own(counter + 5n) }), 409, `stale owner-op counter: expected ${counter}`);
  await s.setTeeAdmissionPolicy(ns, { ...MEASURED, rootProof: own(counter) });
  expect(BigInt((await info(ns)).ownerOpCounter as number)).toBe(counter + 1n);
});

it('TEE authoring policy: PUT and DELETE (0-byte, {} and {rootProof}) each advance the counter; subgroup 400', async () => {
  const counter = async () => Number((await info(ns)).ownerOpCounter);
  const start = await counter();
  await s.setTeeAuthoringPolicy(ns, { allowedMrtd: M });
  expect(await counter()).toBe(start + 1);
  const zero = await c.http.send(`/admin-api/groups/${ns}/settings/tee-authoring-policy`, { method: 'DELETE' });
  expect(zero.status).toBe(200);
  expect(zero.bodyText).toBe('');
  expect(await counter()).toBe(start + 2);
  await c.http.send(`/admin-api/groups/${ns}/settings/tee-authoring-policy`, { method: 'DELETE', body: {} });
  expect(await counter()).toBe(start + 3);
  await c.http.send(`/admin-api/groups/${ns}/settings/tee-authoring-policy`, {
    method: 'DELETE',
    rawBody: '',
    headers: { 'content-type': 'application/json' },
  });
  expect(await counter()).toBe(start + 4);
  await expectStatus(s.disableTeeAuthoringPolicy(ns, ''), 400, 'rootProof: empty');
  await expectStatus(s.setTeeAuthoringPolicy(sub, { allowedMrtd: M }), 400, 'TeeAuthoringPolicyNotOnSubgroup');
  await expectStatus(s.disableTeeAuthoringPolicy(sub), 400, 'TeeAuthoringPolicyNotOnSubgroup');
  expect(await counter()).toBe(start + 4);
});

it('403 naming what is missing once this node is a plain member', async () => {
  const ns2 = await namespace();
  await addMember(ns2, OTHER, 'Admin');
  // reads need membership: a restricted subgroup this node has left answers 403
  const left = (await c.http.data<{ groupId: string }>('/admin-api/groups', { method: 'POST', body: { applicationId: APP, parentGroupId: ns2, visibility: 'restricted' } })).groupId;
  await addMember(left, OTHER, 'Admin');
  await c.http.send(`/admin-api/groups/${left}/transfer-ownership`, { method: 'POST', body: { newOwner: OTHER } });
  await c.http.send(`/admin-api/groups/${left}/leave`, { method: 'POST' });
  await expectStatus(s.memberCapabilities(left, OTHER), 403, 'not a member');
  await expectStatus(s.groupMetadata(left), 403, 'not a member');
  await expectStatus(s.teeAdmissionPolicy(left), 403, 'not a member');
  await s.setMemberCapabilities(ns2, me, CAPABILITIES.CAN_MANAGE_VISIBILITY);
  await c.http.send(`/admin-api/groups/${ns2}/members/${me}/role`, { method: 'PUT', body: { role: 'Member' } });
  await expectStatus(s.setMemberCapabilities(ns2, OTHER, 1), 403, 'only an admin');
  await expectStatus(s.setDefaultCapabilities(ns2, 1), 403, 'only an admin');
  await expectStatus(s.setGroupMetadata(ns2, { data: {} }), 403, 'CAN_MANAGE_METADATA');
  await expectStatus(s.setMemberMetadata(ns2, OTHER, { data: {} }), 403, 'CAN_MANAGE_METADATA');
  await expectStatus(s.setTeeAdmissionPolicy(ns2, MEASURED), 403, 'only an admin');
  await expectStatus(s.setTeeAuthoringPolicy(ns2, { allowedMrtd: M }), 403, 'only an admin');
  await s.setSubgroupVisibility(ns2, 'restricted'); // CAN_MANAGE_VISIBILITY was kept
  await s.setMemberMetadata(ns2, me, { data: { mine: 'yes' } }); // own member metadata is always allowed
  expect((await s.memberMetadata(ns2, me))?.data).toEqual({ mine: 'yes' });
});

it('keeps every setting across a restart; context metadata round-trips once a context is registered', async () => {
  // A context registered by its governance op alone (no application state behind it): a row written
  // straight into the stored state would be dropped by the log's re-verification on start (issue #23).
  await node.node.governance.submit(ns, sub, 'context.registered', { contextId: CTX, applicationId: 'ab'.repeat(32) });
  const before = { root: await info(ns), sub: await info(sub), policy: await s.teeAdmissionPolicy(ns), caps: await s.memberCapabilities(ns, OTHER) };
  node = await node.restart();
  await login();
  expect(await info(ns)).toEqual(before.root);
  expect((await info(sub)).metadata).toEqual(before.sub.metadata);
  expect(await s.teeAdmissionPolicy(ns)).toEqual(before.policy);
  expect(await s.memberCapabilities(ns, OTHER)).toBe(before.caps);
  expect(await s.memberMetadata(ns, OTHER)).toMatchObject({ name: 'other' });
  expect(await s.contextMetadata(sub, CTX)).toBeNull();
  await s.setContextMetadata(sub, CTX, { data: { topic: 'x' } });
  expect(await s.contextMetadata(sub, CTX)).toMatchObject({ name: null, data: { topic: 'x' }, updatedBy: me });
});
