/**
 * A client disconnecting with a call in flight (issue #22): the node answers nothing to it, but the
 * worker running the call is not killed — the call finishes there and the worker serves the next
 * calls. Against a real node process, through /jsonrpc, and /metrics' runtime counters.
 */
import { request } from 'node:http';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createClient, MemoryTokenStore } from '../../../src/client/index.ts';
import { makeBundle } from '../../helpers/bundles.ts';
import { makeHome, spawnNode, type SpawnedNode } from '../../helpers/node.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

let node: SpawnedNode | undefined;
let root: string | undefined;
afterAll(async () => {
  node?.child.kill('SIGTERM');
  await node?.exited;
  if (root) await rm(root, { recursive: true, force: true });
});

/** the value of one metric sample, 0 when absent */
async function metric(url: string, sample: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line ? Number(line.slice(sample.length + 1)) : 0;
}

it('a client that goes away mid-call leaves the worker running: no worker replaced, the next calls answer', async () => {
  const paths = await makeHome();
  root = join(paths.dir, '..');
  node = await spawnNode(['run', '--home', root, '--node', 'test'], { MERO_AUTH_ADMIN_USER: 'dev', MERO_AUTH_ADMIN_PASSWORD: 'dev-password' });
  const url = node.url;
  const c = createClient({ baseUrl: url, tokenStore: new MemoryTokenStore() });
  const { accessToken } = await c.auth.login({ username: 'dev', password: 'dev-password' });
  const bundle = await makeBundle({ wasm: await buildTestApp('spin'), package: 'com.hearth.spin' });
  const appId = (await c.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path } })).applicationId;
  const ns = (await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: appId } })).namespaceId;
  const ctx = (await c.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
  expect(Number(await c.rpc.execute(ctx, 'busy', { ms: 10 }))).toBeGreaterThan(0);

  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'execute', params: { contextId: ctx, method: 'busy', argsJson: { ms: 1500 } } });
  const finished = await metric(url, 'hearth_runtime_calls_total');
  for (let i = 1; i <= 3; i++) {
    // a 1.5 s call, its connection closed after 300 ms
    await new Promise<void>((resolve) => {
      const req = request(`${url}/jsonrpc`, { method: 'POST', headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' } });
      req.on('error', () => resolve());
      req.end(body);
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 300);
    });
    // the node noticed the disconnect and dropped the call's answer; the call still finished on its worker
    await expect.poll(() => metric(url, 'hearth_runtime_calls_abandoned_total'), { timeout: 10_000 }).toBe(i);
    await expect.poll(() => metric(url, 'hearth_runtime_calls_total'), { timeout: 10_000 }).toBe(finished + i);
  }
  for (const reason of ['deadline', 'error', 'exit']) expect(await metric(url, `hearth_runtime_workers_replaced_total{reason="${reason}"}`)).toBe(0);
  expect(Number(await c.rpc.execute(ctx, 'busy', { ms: 10 }))).toBeGreaterThan(0);
  // each worker kept its instance: no more instances than workers for all those calls
  const workers = await metric(url, 'hearth_runtime_workers');
  expect(workers).toBeGreaterThan(0);
  expect(await metric(url, 'hearth_runtime_instances_created_total')).toBeLessThanOrEqual(workers);
  // the workers’ CPU is reported per slot (the abandoned calls spun for 4.5 s of wall-clock time)
  let cpu = 0;
  for (let slot = 0; slot < workers; slot++) cpu += await metric(url, `hearth_runtime_worker_cpu_seconds{slot="${slot}"}`);
  expect(cpu).toBeGreaterThan(0);
}, 120_000);
