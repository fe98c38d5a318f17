/**
 * A node restarted with a context is ready for its first call when it says it is listening (issue
 * #22; src/node/prepare.ts): its worker is up with the context's module and instance, so the first
 * call creates no instance; and that one warm worker is kept while idle (src/runtime/worker-retire.ts).
 * Against real node processes on one home, through /metrics' runtime series.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createClient, MemoryTokenStore } from '../../../src/client/index.ts';
import { makeBundle } from '../../helpers/bundles.ts';
import { makeHome, spawnNode, type SpawnedNode } from '../../helpers/node.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

const ADMIN = { MERO_AUTH_ADMIN_USER: 'dev', MERO_AUTH_ADMIN_PASSWORD: 'dev-password' };
let node: SpawnedNode | undefined;
let root: string | undefined;
afterAll(async () => {
  node?.child.kill('SIGTERM');
  await node?.exited;
  if (root) await rm(root, { recursive: true, force: true });
});

async function metric(url: string, sample: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line ? Number(line.slice(sample.length + 1)) : undefined;
}

async function login(url: string) {
  const c = createClient({ baseUrl: url, tokenStore: new MemoryTokenStore() });
  await c.auth.login({ username: 'dev', password: 'dev-password' });
  return c;
}

it('after a restart the context’s module is prepared before listening: the first call creates no instance, the warm worker stays', async () => {
  const paths = await makeHome();
  root = join(paths.dir, '..');
  const args = ['run', '--home', root, '--node', 'test'];
  node = await spawnNode(args, ADMIN);
  let c = await login(node.url);
  const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.kv.restart' });
  const appId = (await c.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path } })).applicationId;
  const ns = (await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: appId } })).namespaceId;
  const ctx = (await c.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
  await c.rpc.execute(ctx, 'set', { key: 'k', value: 'v1' });
  node.child.kill('SIGTERM');
  await node.exited;

  node = await spawnNode(args, ADMIN);
  // at the listening line the worker is already up with the module
  expect(await metric(node.url, 'hearth_runtime_workers')).toBe(1);
  c = await login(node.url);
  expect(await c.rpc.execute(ctx, 'get', { key: 'k' })).toBe('v1');
  expect(await metric(node.url, 'hearth_runtime_instances_created_total')).toBe(0);
  expect(await metric(node.url, 'hearth_runtime_calls_total')).toBe(1);
  // idle past the retirement time: the one warm worker is kept
  await new Promise((r) => setTimeout(r, 8_000));
  expect(await metric(node.url, 'hearth_runtime_workers')).toBe(1);
  expect(await metric(node.url, 'hearth_runtime_workers_retired_total')).toBe(0);
  expect(await c.rpc.execute(ctx, 'get', { key: 'k' })).toBe('v1');
  expect(await metric(node.url, 'hearth_runtime_instances_created_total')).toBe(0);
}, 90_000);
