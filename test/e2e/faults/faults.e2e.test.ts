/**
 * Fault tests (issue #17 "Keep it fixed"): a node killed with SIGKILL while it acknowledges writes
 * of every kind loses none of them, over several rounds on one home; a node starved of file
 * descriptors by idle connections keeps answering (never a 500) and ends ready, or exits with a
 * clear message; a store IO error makes the node not ready with the reason until it is reopened.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { chainedBatchPrototype } from '../../helpers/level.ts';
import { clientIdOf, createClient, MemoryTokenStore, type Client } from '../../../src/client/index.ts';
import { makeBundle } from '../../helpers/bundles.ts';
import { makeHome, spawnNode, startTestNode, type SpawnedNode } from '../../helpers/node.ts';
import { idleSocket } from '../../helpers/raw-http.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

const roots: string[] = [];
afterAll(async () => {
  for (const r of roots) await rm(r, { recursive: true, force: true });
});

const ENV = { MERO_AUTH_ADMIN_USER: 'dev', MERO_AUTH_ADMIN_PASSWORD: 'dev-password' };

async function loggedIn(url: string): Promise<Client> {
  const c = createClient({ baseUrl: url, tokenStore: new MemoryTokenStore() });
  await c.auth.login({ username: 'dev', password: 'dev-password' });
  return c;
}

interface Acked {
  state: Map<string, string>;
  subgroups: string[];
  clientKeys: string[];
  blobs: string[];
}

describe('kill -9 during writes', () => {
  it('keeps every acknowledged write of every kind, over several rounds', async () => {
    const paths = await makeHome();
    const root = join(paths.dir, '..');
    roots.push(root);
    const args = ['run', '--home', root, '--node', 'test'];
    const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.kv' });

    let n: SpawnedNode = await spawnNode(args, ENV);
    let c = await loggedIn(n.url);
    const appId = (await c.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path } })).applicationId;
    const ns = (await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: appId } })).namespaceId;
    const ctx = (await c.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
    const acked: Acked = { state: new Map(), subgroups: [], clientKeys: [], blobs: [] };

    for (let round = 0; round < 3; round++) {
      let stop = false;
      const writer = async (kind: number) => {
        for (let i = 0; !stop; i++) {
          const tag = `r${round}-w${kind}-${i}`;
          try {
            if (kind === 0) {
              await c.rpc.execute(ctx, 'set', { key: tag, value: `v-${tag}` });
              acked.state.set(tag, `v-${tag}`);
            } else if (kind === 1) {
              const { groupId } = await c.http.data<{ groupId: string }>(`/admin-api/namespaces/${ns}/groups`, { method: 'POST', body: { groupName: tag } });
              acked.subgroups.push(groupId);
            } else if (kind === 2) {
              const minted = await c.auth.createClientKey({ permissions: ['context:list'] });
              acked.clientKeys.push(clientIdOf(minted.data.access_token)!);
            } else {
              const up = await c.blobs.upload(Buffer.from(`blob ${tag} `.repeat(2000)));
              acked.blobs.push(up.blob_id);
            }
          } catch {
            return; // the node is gone
          }
        }
      };
      const before = acked.state.size + acked.subgroups.length + acked.clientKeys.length + acked.blobs.length;
      const writers = [0, 1, 2, 3, 0, 2].map(writer);
      while (acked.state.size + acked.subgroups.length + acked.clientKeys.length + acked.blobs.length < before + 40) {
        await new Promise((r) => setTimeout(r, 5));
      }
      n.child.kill('SIGKILL');
      stop = true;
      await Promise.all(writers);
      await n.exited;

      n = await spawnNode(args, {});
      c = await loggedIn(n.url);
      for (const [k, v] of acked.state) expect([k, await c.rpc.execute(ctx, 'get', { key: k })]).toEqual([k, v]);
      const groups = new Set((await c.http.data<{ groupId: string }[]>(`/admin-api/namespaces/${ns}/groups`)).map((g) => g.groupId));
      for (const g of acked.subgroups) expect(groups.has(g)).toBe(true);
      const keys = new Set((await c.auth.listClientKeys()).map((k) => k.client_id));
      for (const k of acked.clientKeys) expect(keys.has(k)).toBe(true);
      const blobs = new Set((await c.blobs.list()).map((b) => b.blob_id));
      for (const b of acked.blobs) expect(blobs.has(b)).toBe(true);
    }
    expect(acked.state.size).toBeGreaterThan(0);
    n.child.kill('SIGTERM');
    await n.exited;
  }, 240_000);
});

describe('file-descriptor exhaustion (finding 1)', () => {
  it('idle connections under a low descriptor limit never break the node: no 500, ready again afterwards', async () => {
    const paths = await makeHome({ configure: (cfg) => (cfg.server.headerTimeoutSecs = 2) });
    const root = join(paths.dir, '..');
    roots.push(root);
    const n = await spawnNode(['run', '--home', root, '--node', 'test'], ENV, 30_000, ['prlimit', '--nofile=600']);
    const login = await loggedIn(n.url);
    const token = (await login.tokenStore.get())!.accessToken;
    let stop = false;
    const sockets: Awaited<ReturnType<typeof idleSocket>>[] = [];
    const flood = (async () => {
      while (!stop) {
        try {
          sockets.push(await idleSocket(n.url));
        } catch {
          await new Promise((r) => setTimeout(r, 5));
        }
        if (sockets.length > 3000) for (const s of sockets.splice(0, 1000)) s.destroy();
      }
    })();
    const statuses: number[] = [];
    const perms = Array.from({ length: 900 }, (_, i) => `context:list[${i.toString(16).padStart(64, '0')}]`);
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        try {
          // writes that make LevelDB and the blob store open new files
          const res =
            i % 2
              ? await fetch(`${n.url}/admin/client-key`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ permissions: perms }) })
              : await fetch(`${n.url}/admin-api/blobs`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' }, body: Buffer.alloc(2 * 1024 * 1024, w * 1000 + i) });
          statuses.push(res.status);
          await res.arrayBuffer();
        } catch {
          // refused at accept while the idle connections hold every slot: the cap at work
        }
      }
    };
    const writers = [0, 1, 2, 3, 4, 5].map(writer);
    await new Promise((r) => setTimeout(r, 12_000));
    stop = true;
    await flood;
    await Promise.all(writers);
    for (const s of sockets) s.destroy();

    expect(statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    // the end state: ready and writing again, or gone with a clear message
    let ready = false;
    let exited = false;
    void n.exited.then(() => (exited = true));
    for (let i = 0; i < 120 && !ready && !exited; i++) {
      ready = await fetch(`${n.url}/admin-api/ready`).then((r) => r.status === 200, () => false);
      if (!ready) await new Promise((r) => setTimeout(r, 1000));
    }
    if (exited) {
      expect(n.output()).toMatch(/hearth: the store could not be reopened/);
    } else {
      expect(ready).toBe(true);
      const again = await fetch(`${n.url}/admin-api/blobs`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' }, body: 'after' });
      expect(again.status).toBe(200);
      n.child.kill('SIGTERM');
      await n.exited;
    }
  }, 180_000);
});

describe('store IO error (finding 1)', () => {
  it('makes the node not ready with the reason, answers 503 to writes, and reopens the store', async () => {
    const node = await startTestNode();
    try {
      const c = await loggedIn(node.url);
      const spy = vi.spyOn(await chainedBatchPrototype(), 'write').mockRejectedValueOnce(Object.assign(new Error('IO error: 000042.log: Too many open files'), { code: 'LEVEL_IO_ERROR' }));
      const failed = await fetch(`${node.url}/admin/client-key`, {
        method: 'POST',
        headers: { authorization: `Bearer ${(await c.tokenStore.get())!.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ permissions: ['context:list'] }),
      });
      spy.mockRestore();
      expect(failed.status).toBe(503);
      expect(failed.headers.get('retry-after')).toBeTruthy();
      const ready = await fetch(`${node.url}/admin-api/ready`);
      expect(ready.status).toBe(503);
      expect((await ready.json()).data).toEqual({ status: 'store_unavailable', reason: 'IO error: 000042.log: Too many open files' });
      expect((await fetch(`${node.url}/admin-api/health`)).status).toBe(503);
      let status = 503;
      for (let i = 0; i < 100 && status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 100));
        status = (await fetch(`${node.url}/admin-api/ready`)).status;
      }
      expect(status).toBe(200);
      await expect(c.auth.createClientKey({ permissions: ['context:list'] })).resolves.toBeTruthy();
    } finally {
      await node.destroy();
    }
  });
});
