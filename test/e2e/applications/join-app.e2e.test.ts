/**
 * Issue #34 §1 end to end: joining a context brings its application (docs/applications.md
 * "Joining a context brings its application"). Two node processes on 127.0.0.1 driven through the
 * SDK: A installs kv_store (the port shaped like an application built with the reference SDK),
 * creates a namespace and a context and writes to it; B never installs the application, joins,
 * and within 30 s lists the application (installed from the bundle blob A serves) and answers
 * calls on the context. When no member serves the bundle, B's sync status and its calls name the
 * application and the fix, and installing it by hand on B ends the wait.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RpcError } from '../../../src/client/index.ts';
import { makeBundle, type MadeBundle } from '../../helpers/bundles.ts';
import { eventually, joinContext, startCluster, type Cluster, type ClusterNode } from '../../helpers/cluster.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

let cluster: Cluster;
let a: ClusterNode, b: ClusterNode;

beforeAll(async () => {
  cluster = await startCluster(2);
  [a, b] = cluster.nodes as [ClusterNode, ClusterNode];
}, 120_000);

afterAll(async () => {
  await cluster?.destroy();
});

async function kvStore(pkg: string): Promise<MadeBundle> {
  return makeBundle({ wasm: await buildTestApp('kv_store'), package: pkg });
}

async function rpcError(p: Promise<unknown>): Promise<RpcError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RpcError);
  return err as RpcError;
}

it('a node that never installed the application answers calls on a context it joined within 30 s, and lists the application', { timeout: 150_000 }, async () => {
  const bundle = await kvStore('com.hearth.join.kv_store');
  const appId = (await a.client.applications.installDev(bundle.path)).applicationId;
  const ns = (await a.client.namespaces.create({ applicationId: appId })).namespaceId;
  const ctx = (await a.client.contexts.create({ groupId: ns, initializationParams: [] })).contextId;
  await a.client.rpc.execute(ctx, 'set', { key: 'k', value: 'from A' });
  expect((await b.client.applications.list()).map((x) => x.id)).not.toContain(appId);

  const joined = Date.now();
  await joinContext(a, b, ns, ctx);
  await eventually('B answers a call on the context', async () => (await b.client.rpc.execute(ctx, 'get', { key: 'k' })) === 'from A', 30_000 - (Date.now() - joined));
  const listed = (await b.client.applications.list()).find((x) => x.id === appId);
  expect(listed).toMatchObject({ id: appId, package: 'com.hearth.join.kv_store', version: '1.0.0' });
  expect(listed!.source).toMatch(/^blob:[0-9a-f]{64}$/);
  // B runs it: its writes reach A
  await b.client.rpc.execute(ctx, 'set', { key: 'from-b', value: 'B' });
  await eventually('A has B’s write', async () => (await a.client.rpc.execute(ctx, 'get', { key: 'from-b' })) === 'B', 30_000);
  await eventually('B is caught up, with no application reason', async () => {
    const s = await b.client.contexts.syncStatus(ctx);
    return s.caughtUp && !s.reasons.some((r) => r.reason.includes('application'));
  });
});

it('no member serves the bundle: the status and the calls name the application and the fix; installing it on the node ends the wait', { timeout: 150_000 }, async () => {
  const bundle = await kvStore('com.hearth.join.unserved');
  const appId = (await a.client.applications.installDev(bundle.path)).applicationId;
  const ns = (await a.client.namespaces.create({ applicationId: appId })).namespaceId;
  const ctx = (await a.client.contexts.create({ groupId: ns, initializationParams: [] })).contextId;
  // A no longer holds the bundle: no member can serve it
  await a.client.applications.uninstall(appId);

  await joinContext(a, b, ns, ctx);
  await eventually(
    'B’s status names the application and the fix',
    async () => (await b.client.contexts.syncStatus(ctx)).reasons.some((r) => r.reason === 'application_unavailable'),
    30_000,
  );
  const status = await b.client.contexts.syncStatus(ctx);
  expect(status.caughtUp).toBe(false);
  const reason = status.reasons.find((r) => r.reason === 'application_unavailable')!;
  expect(reason.detail).toContain(`application ${appId} is not installed`);
  expect(reason.detail).toContain('hearth app install-dev');
  const err = await rpcError(b.client.rpc.execute(ctx, 'get', { key: 'k' }));
  expect(err.type).toBe('ApplicationNotInstalled');
  expect(err.data).toMatchObject({ application_id: appId, message: expect.stringContaining('hearth app install-dev') });

  await b.client.applications.installDev(bundle.path);
  await eventually('B answers once installed', async () => (await b.client.rpc.execute(ctx, 'get', { key: 'k' })) === null, 30_000);
  expect((await b.client.contexts.syncStatus(ctx)).reasons.some((r) => r.reason.includes('application'))).toBe(false);
});
