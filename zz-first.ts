import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { createClient, MemoryTokenStore } from './src/client/index.ts';
import { makeBundle } from './test/helpers/bundles.ts';
import { makeHome, spawnNode } from './test/helpers/node.ts';
import { buildTestApp } from './test/helpers/wasm-apps.ts';
const ENV = { MERO_AUTH_ADMIN_USER: 'dev', MERO_AUTH_ADMIN_PASSWORD: 'dev-password' };
const paths = await makeHome();
const root = join(paths.dir, '..');
const args = ['run', '--home', root, '--node', 'test'];
let n = await spawnNode(args, ENV);
const login = async (url: string) => { const c = createClient({ baseUrl: url, tokenStore: new MemoryTokenStore() }); await c.auth.login({ username: 'dev', password: 'dev-password' }); return c; };
let c = await login(n.url);
const bundle = await makeBundle({ wasm: await buildTestApp(process.argv[2] ?? 'kv_store'), package: 'com.hearth.first' });
const appId = (await c.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path } })).applicationId;
const ns = (await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: appId } })).namespaceId;
const ctx = (await c.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
for (let i = 0; i < 20; i++) await c.rpc.execute(ctx, 'set', { key: 'k' + i, value: 'v' });
for (let round = 0; round < 2; round++) {
  n.child.kill('SIGTERM'); await n.exited;
  n = await spawnNode(args, {});
  c = await login(n.url);
  await new Promise((r) => setTimeout(r, Number(process.env.SETTLE ?? 0)));
  const times: number[] = [];
  for (let i = 0; i < 4; i++) { const t = performance.now(); await c.rpc.execute(ctx, 'get', { key: 'k1' }); times.push(performance.now() - t); }
  console.log('first gets after restart (ms):', times.map((t) => t.toFixed(1)).join(' '));
}
n.child.kill('SIGTERM'); await n.exited;
await rm(root, { recursive: true, force: true });
