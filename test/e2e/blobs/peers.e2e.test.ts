/**
 * Blobs between peers end to end (docs/blobs.md "Blobs between peers"; admin spec "Blobs"): two
 * node processes on 127.0.0.1; B joins A's namespace through an invitation; a blob uploaded on A
 * for a context of that namespace is found by B with `context_id` (HEAD says `peer`), fetched over
 * `/calimero/blob/0.0.2`, verified and kept (HEAD then says `local`); a blob no peer has is a
 * clear 404, and without `context_id` only B's own store is searched.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeBundle } from '../../helpers/bundles.ts';
import { eventually, startCluster, type Cluster, type ClusterNode } from '../../helpers/cluster.ts';
import { httpError } from '../../helpers/status.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

let cluster: Cluster;
let a: ClusterNode, b: ClusterNode;

const sha = (x: Uint8Array) => createHash('sha256').update(x).digest('hex');

beforeAll(async () => {
  cluster = await startCluster(2);
  [a, b] = cluster.nodes as [ClusterNode, ClusterNode];
}, 120_000);

afterAll(async () => {
  await cluster?.destroy();
});

it('B fetches from A a blob A holds for a context of their namespace, and only with context_id', { timeout: 120_000 }, async () => {
  const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.kv' });
  const install = (n: ClusterNode) => n.client.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } });
  // B has the application too, so the only blob it takes from A is the test's (a joiner without it
  // would fetch the bundle from A: test/e2e/applications/join-app.e2e.test.ts)
  const [{ applicationId: appId }] = await Promise.all([install(a), install(b)]);
  const ns = (await a.client.namespaces.create({ applicationId: appId })).namespaceId;
  const { invitation } = await a.client.invitations.inviteToNamespace(ns);
  const bAccount = (await b.client.invitations.joinNamespace(ns, invitation)).memberAccount;
  await eventually('A lists B', async () => (await a.client.groups.members(ns)).some((m) => m.identity === bAccount));
  const ctx = (await a.client.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
  await eventually('B knows the context', async () => (await b.client.groups.contexts(ns)).some((c) => c.contextId === ctx));

  const data = new Uint8Array(randomBytes(1024 * 1024 + 4321));
  const { blob_id: blobId } = await a.client.blobs.upload(data, { contextId: ctx });

  // without context_id B searches only its own store
  const local = await httpError(b.client.blobs.bytes(blobId));
  expect(local.status).toBe(404);

  expect(await b.client.blobs.head(blobId, { contextId: ctx })).toMatchObject({ blobId, size: data.length, source: 'peer' });
  const got = await b.client.blobs.bytes(blobId, { contextId: ctx });
  expect(sha(got)).toBe(sha(data));
  expect(await b.client.blobs.head(blobId)).toMatchObject({ blobId, size: data.length, hash: sha(data), source: 'local' });
  expect((await b.client.blobs.list()).map((x) => x.blob_id)).toContain(blobId);

  const missing = 'ab'.repeat(32);
  const none = await httpError(b.client.blobs.bytes(missing, { contextId: ctx }));
  expect(none.status).toBe(404);
  expect(none.message).toContain(`no peer of context ${ctx} has it`);

  const metrics = await (await fetch(`${a.url}/metrics`)).text();
  expect(metrics).toMatch(/hearth_blob_peer_requests_served_total\{outcome="sent"\} 1\b/);
});
