/**
 * Governance core over HTTP: identity, founding a namespace (derived id), creating a subgroup,
 * GroupInfo, and restart persistence of the derived state.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Client, HttpError } from '../../../src/client/index.ts';
import { domainHash } from '../../helpers/domain-hash.ts';
import { adminClient, startTestNode, type TestNode } from '../../helpers/node.ts';

const APP = 'a'.repeat(64);
let node: TestNode;
let c: Client;

beforeAll(async () => {
  node = await startTestNode();
  c = await adminClient(node);
});
afterAll(async () => node?.destroy());

it('GET /identity reports an account derived from the account root key', async () => {
  const id = await c.http.data<Record<string, unknown>>('/admin-api/identity');
  expect(id.accountId).toMatch(/^[0-9a-f]{64}$/);
  expect(id.deviceId).toMatch(/^[0-9a-f]{64}$/);
  expect(id.publicKey).toMatch(/^[0-9a-f]{64}$/);
  expect(id.holdsAccountRoot).toBe(true);
  const root = Buffer.from(id.accountRootPublicKey as string, 'hex');
  expect(id.accountId).toBe(domainHash('calimero.account.genesis.v1', [Buffer.concat([Buffer.from([2]), root])]).toString('hex'));
});

it('founds a namespace whose id derives from founder and salt, lists it and reads it as a group', async () => {
  const identity = await c.http.data<{ accountId: string }>('/admin-api/identity');
  const created = await c.http.data<{ namespaceId: string; founding: { founderAccountId: string; salt: string } }>('/admin-api/namespaces', {
    method: 'POST',
    body: { applicationId: APP, name: 'project', upgradePolicy: 'LazyOnAccess' },
  });
  expect(created.founding.founderAccountId).toBe(identity.accountId);
  expect(created.namespaceId).toBe(
    domainHash('calimero.namespace.id.v1', [Buffer.from(identity.accountId, 'hex'), Buffer.from(created.founding.salt, 'hex')]).toString('hex'),
  );
  const list = await c.http.data<{ namespaceId: string }[]>('/admin-api/namespaces');
  expect(list.map((n) => n.namespaceId)).toContain(created.namespaceId);
  const ns = await c.http.data<Record<string, unknown>>(`/admin-api/namespaces/${created.namespaceId}`);
  expect(ns).toMatchObject({ name: 'project', targetApplicationId: APP, memberCount: 1, contextCount: 0, subgroupCount: 0 });
  const info = await c.http.data<Record<string, unknown>>(`/admin-api/groups/${created.namespaceId}`);
  expect(info).toMatchObject({ groupId: created.namespaceId, namespaceId: created.namespaceId, ownerOpCounter: 0, memberCount: 1, subgroupVisibility: 'open' });
});

it('creates a subgroup with a derived id; refuses a groupId field and an unknown parent', async () => {
  const { namespaceId } = await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: APP } });
  const { groupId } = await c.http.data<{ groupId: string }>('/admin-api/groups', {
    method: 'POST',
    body: { applicationId: APP, name: 'team', parentGroupId: namespaceId },
  });
  expect(groupId).not.toBe(namespaceId);
  const info = await c.http.data<Record<string, unknown>>(`/admin-api/groups/${groupId}`);
  expect(info).toMatchObject({ namespaceId, defaultCapabilities: 4 });
  const refused = await c.http.send('/admin-api/groups', { method: 'POST', body: { applicationId: APP, groupId: 'b'.repeat(64) } }).catch((e: HttpError) => e);
  expect((refused as HttpError).status).toBe(400);
  expect((refused as HttpError).bodyText).toContain('groupId');
  const orphan = await c.http.send('/admin-api/groups', { method: 'POST', body: { applicationId: APP, parentGroupId: 'c'.repeat(64) } }).catch((e: HttpError) => e);
  expect((orphan as HttpError).status).toBe(404);
  expect((await c.http.send('/admin-api/groups/zz', {}).catch((e: HttpError) => e) as HttpError).status).toBe(400);
});

it('keeps identity and governance state across a restart', async () => {
  const before = await c.http.data<{ accountId: string }>('/admin-api/identity');
  const list = await c.http.data<{ namespaceId: string }[]>('/admin-api/namespaces');
  node = await node.restart();
  const c2 = await adminClient(node);
  expect((await c2.http.data<{ accountId: string }>('/admin-api/identity')).accountId).toBe(before.accountId);
  expect(await c2.http.data('/admin-api/namespaces')).toEqual(list);
});
