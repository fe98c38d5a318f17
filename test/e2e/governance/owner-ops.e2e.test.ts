/**
 * Root-guarded owner operations over HTTP through the SDK (admin-wire-b §5, §2.13, §4.21–§4.22):
 * the counter sequence and its persistence, self-signing by the node holding the owner's root, and
 * each typed refusal — empty proof 400, stranger root 403, absent proof on a non-holder 403, stale
 * counter 409, transfer to a non-admin/non-member 409, owner-delete of the root 400.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HttpError, type Client } from '../../../src/client/index.ts';
import { OwnerApi } from '../../../src/client/owner.ts';
import { accountIdOf } from '../../../src/crypto/ids.ts';
import { ed25519Sign, generateKeyPair, privateKeyObject } from '../../../src/crypto/keys.ts';
import { adminChangedOpBorsh, transferOwnershipOpBorsh } from '../../../src/governance/owner/ops.ts';
import { opDigestOf, OWNER_OP_KIND, signOwnerOp } from '../../../src/governance/root-guard.ts';
import { adminClient, startTestNode, type TestNode } from '../../helpers/node.ts';

const APP = 'a'.repeat(64);
let node: TestNode;
let c: Client;
let owner: OwnerApi;
let me: string;
let ns: string;

const pair = generateKeyPair('ed25519');
const strangerKey = privateKeyObject(pair.privateKey);
const STRANGER = accountIdOf(Buffer.from(pair.publicKey, 'hex'));
const strangerProof = (groupId: string, kind: number, opBorsh: Buffer, counter: bigint) =>
  signOwnerOp(pair.publicKey, (m) => ed25519Sign(strangerKey, m), { account: STRANGER, namespaceId: ns, groupId, kind, opDigest: opDigestOf(opBorsh), counter, keyEpoch: 0 });

async function login() {
  c = await adminClient(node);
  owner = c.owner;
}

const info = (g: string) => c.http.data<{ namespaceId: string; ownerOpCounter: number | bigint }>(`/admin-api/groups/${g}`);
const fails = (p: Promise<unknown>) => p.then(() => undefined, (e: HttpError) => e);

beforeAll(async () => {
  node = await startTestNode();
  await login();
  me = (await c.http.data<{ accountId: string }>('/admin-api/identity')).accountId;
  ns = (await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: APP } })).namespaceId;
});
afterAll(async () => node?.destroy());

const subgroup = async () =>
  (await c.http.data<{ groupId: string }>('/admin-api/groups', { method: 'POST', body: { applicationId: APP, parentGroupId: ns } })).groupId;

it('advances ownerOpCounter 0 → 1 → 2 for self-signed admin change and transfer-to-self, with empty 200s', async () => {
  expect(await info(ns)).toMatchObject({ namespaceId: ns, ownerOpCounter: 0 });
  const raw = await c.http.send(`/admin-api/namespaces/${ns}/admin`, { method: 'POST', body: { newAdmin: me } });
  expect(raw.status).toBe(200);
  expect(raw.bodyText).toBe('');
  expect((await info(ns)).ownerOpCounter).toBe(1);
  await owner.transferOwnership(ns, { newOwner: me });
  expect((await info(ns)).ownerOpCounter).toBe(2);
});

it('refuses an empty rootProof (400), a bad account (400), a stranger-signed proof (403) and an unknown namespace (404)', async () => {
  const empty = await fails(owner.changeNamespaceAdmin(ns, { newAdmin: me, rootProof: '' }));
  expect(empty?.status).toBe(400);
  expect(empty?.bodyText).toContain('rootProof: empty; omit the field entirely if you have no proof');
  expect((await fails(owner.transferOwnership(ns, { newOwner: 'nope' })))?.bodyText).toContain('newOwner must be 64 hex chars (32 bytes)');
  expect((await fails(owner.transferOwnership(ns, { newOwner: me, rootProof: 'deadbeef' })))?.status).toBe(400);
  const stranger = strangerProof(ns, OWNER_OP_KIND.AdminChanged, adminChangedOpBorsh(me), 2n);
  expect((await fails(owner.changeNamespaceAdmin(ns, { newAdmin: me, rootProof: stranger })))?.status).toBe(403);
  expect((await fails(owner.changeNamespaceAdmin('f'.repeat(64), { newAdmin: me })))?.status).toBe(404);
  expect((await info(ns)).ownerOpCounter).toBe(2);
});

it('transfers only to an admin (409 otherwise); afterwards this node needs the new owner’s proof (403) and a stale one is 409', async () => {
  const sub = await subgroup();
  expect((await fails(owner.transferOwnership(sub, { newOwner: STRANGER })))?.status).toBe(409);
  await c.http.send(`/admin-api/groups/${sub}/members`, { method: 'POST', body: { members: [{ identity: STRANGER, role: 'Member' }] } });
  expect((await fails(owner.transferOwnership(sub, { newOwner: STRANGER })))?.status).toBe(409);
  await c.http.send(`/admin-api/groups/${sub}/members/${STRANGER}/role`, { method: 'PUT', body: { role: 'Admin' } });
  await owner.transferOwnership(sub, { newOwner: STRANGER });
  expect((await info(sub)).ownerOpCounter).toBe(1);
  // no proof: this node does not hold the stranger's root
  expect((await fails(owner.transferOwnership(sub, { newOwner: me })))?.status).toBe(403);
  expect((await fails(owner.ownerDelete(sub)))?.status).toBe(403);
  const stale = await fails(owner.transferOwnership(sub, { newOwner: me, rootProof: strangerProof(sub, OWNER_OP_KIND.TransferOwnership, transferOwnershipOpBorsh(me), 0n) }));
  expect(stale?.status).toBe(409);
  expect(stale?.bodyText).toContain('stale owner-op counter: expected 1, got 0');
  // the owner's valid proof still cannot be carried by a node speaking for another account
  const valid = await fails(owner.transferOwnership(sub, { newOwner: me, rootProof: strangerProof(sub, OWNER_OP_KIND.TransferOwnership, transferOwnershipOpBorsh(me), 1n) }));
  expect(valid?.status).toBe(403);
  expect((await info(sub)).ownerOpCounter).toBe(1);
});

it('owner-deletes an empty subgroup with no body or {} and refuses the namespace root (400)', async () => {
  const a = await subgroup();
  const b = await subgroup();
  await owner.ownerDelete(a);
  const raw = await c.http.send(`/admin-api/groups/${b}/owner-delete`, { method: 'POST' });
  expect(raw.status).toBe(200);
  expect((await fails(info(a)))?.status).toBe(404);
  expect((await fails(info(b)))?.status).toBe(404);
  expect((await fails(owner.ownerDelete(ns)))?.status).toBe(400);
  expect((await fails(owner.ownerDelete(ns, { rootProof: '' })))?.status).toBe(400);
});

it('serves signing-key (issue #15; rc.83 does not route it): a request without a key is a 400', async () => {
  expect((await fails(c.http.send(`/admin-api/groups/${ns}/signing-key`, { method: 'POST', body: {} })))?.status).toBe(400);
});

it('keeps the counter across a restart, and the next op continues from it', async () => {
  node = await node.restart();
  await login();
  expect((await info(ns)).ownerOpCounter).toBe(2);
  await owner.changeNamespaceAdmin(ns, { newAdmin: me });
  expect((await info(ns)).ownerOpCounter).toBe(3);
});
