// scratch: profile the compiled node under a JSON-RPC load (not committed)
import { rm, mkdir } from 'node:fs/promises';
import { makeBundle } from '../test/helpers/bundles.ts';
import { buildTestApp } from '../test/helpers/wasm-apps.ts';
import { loadgen, ADMIN_ENV } from '../bench/harness.ts';
import { makeHome, spawnNode } from '../test/helpers/node.ts';
import { createClient, MemoryTokenStore } from '../src/client/index.ts';
import { join } from 'node:path';

const method = (process.argv[2] ?? 'get') as 'get' | 'set';
const keys = Number(process.argv[3] ?? 1000);
const prof = process.env.PROF === '1';
if (prof) { await rm('/tmp/prof', { recursive: true, force: true }); await mkdir('/tmp/prof'); }
const paths = await makeHome();
const spawned = await spawnNode(['run', '--home', join(paths.dir, '..'), '--node', 'test'], { ...ADMIN_ENV, HEARTH_LOG: '' }, 60_000, prof ? ['/tmp/tools/nodeprof.sh'] : []);
const c = createClient({ baseUrl: spawned.url, tokenStore: new MemoryTokenStore() });
const token = (await c.auth.login({ username: 'dev', password: 'dev-password' })).accessToken;
const node = { url: spawned.url, token, stop: async () => { spawned.child.kill('SIGTERM'); await spawned.exited; } };
const bundle = await makeBundle({ wasm: await buildTestApp('kv_flat'), package: 'com.hearth.prof' });
const appId = (await c.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
const ns = (await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: appId } })).namespaceId;
const contextId = (await c.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
let have = 0;
while (have < keys) have = Number(await c.rpc.execute(contextId, 'fill', { prefix: 'k', from: have, count: Math.min(10000, keys - have) }));
const headers = { authorization: `Bearer ${node.token}` };
const spec = { url: `${node.url}/jsonrpc`, headers, check: 'jsonrpc' as const, rpc: { contextId, method, keyPrefix: 'k', keys }, connections: Number(process.env.C ?? 16), durationSecs: Number(process.env.S ?? 5) };
await loadgen({ ...spec, durationSecs: 1 });
console.log(JSON.stringify(await loadgen(spec)));
await node.stop();
