/**
 * hearth's `PUT /admin-api/dev-bundle` (issue #34 §2) on an in-process node over HTTP: a raw module
 * comes back as a bundle signed by the node's development key (kept, 0600, one key across calls,
 * so versions of a package share an application id), installable as any bundle; hostile and
 * malformed requests get a 4xx naming the problem; the route needs `admin`; a node with
 * `dev_install_root` refuses; and installs still refuse the raw module.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, HttpError, MemoryTokenStore, type Client } from '../../src/client/index.ts';
import { testAbi, tinyWasm } from '../helpers/bundles.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { verifyBundle } from '../../src/applications/bundle.ts';
import { DEV_SIGNING_KEY_FILE } from '../../src/applications/dev-bundle.ts';

let node: TestNode;
let client: Client;
const store = new MemoryTokenStore();
const wasm = tinyWasm({ abi: testAbi() });

beforeAll(async () => {
  node = await startTestNode({ network: null });
  client = createClient({ baseUrl: node.url, tokenStore: store });
  await client.auth.login({ username: node.adminUser, password: node.adminPassword });
}, 60_000);

afterAll(async () => {
  await node?.destroy();
});

async function put(query: string, body: Uint8Array | string, headers: Record<string, string> = {}): Promise<Response> {
  const token = (await store.get())?.accessToken ?? '';
  return fetch(`${node.url}/admin-api/dev-bundle?${query}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', ...headers },
    body: body as BodyInit,
  });
}

const failure = async (res: Response) => ({ status: res.status, error: ((await res.json()) as { error: string }).error });

describe('PUT /admin-api/dev-bundle', () => {
  it('bundles a raw module with the node’s development key; the bundle installs, the module does not', async () => {
    const first = await client.applications.bundleDev(wasm, { package: 'dev.local.tiny', version: '0.1.0', name: 'Tiny' });
    const verified = await verifyBundle(first.bundle);
    expect(verified.applicationId).toBe(first.applicationId);
    expect(verified.manifest).toMatchObject({ package: 'dev.local.tiny', appVersion: '0.1.0' });
    expect((await stat(join(node.paths.dir, DEV_SIGNING_KEY_FILE))).mode & 0o777).toBe(0o600);
    // the same key next time: a later version is the same application
    const second = await client.applications.bundleDev(wasm, { package: 'dev.local.tiny', version: '0.2.0' });
    expect(second.applicationId).toBe(first.applicationId);
    expect((await client.applications.installBundle(second.bundle)).applicationId).toBe(first.applicationId);
    const raw = await client.applications.installBundle(wasm).then(() => undefined, (e: unknown) => e);
    expect(raw).toBeInstanceOf(HttpError);
    expect((raw as HttpError).status).toBe(400);
  });

  it('refuses malformed and hostile requests with a 400 naming the problem', async () => {
    expect(await failure(await put('package=dev.local.x&version=0.1.0', 'not wasm at all'))).toMatchObject({ status: 400, error: expect.stringContaining('not a WebAssembly module') });
    expect(await failure(await put('package=dev.local.x&version=0.1.0', new Uint8Array(0)))).toMatchObject({ status: 400, error: expect.stringContaining('send the raw WebAssembly module') });
    expect(await failure(await put('package=dev.local.x&version=one', wasm))).toMatchObject({ status: 400, error: expect.stringContaining('not a semantic version') });
    expect(await failure(await put('package=..%2Fetc&version=0.1.0', wasm))).toMatchObject({ status: 400, error: expect.stringContaining('package') });
    expect((await put('version=0.1.0', wasm)).status).toBe(400);
    expect((await put(`package=${'a'.repeat(500)}&version=0.1.0`, wasm)).status).toBe(400);
    expect((await put('package=dev.local.x&version=0.1.0', wasm, { 'content-type': 'application/json' })).status).toBe(415);
  });

  it('needs admin: no token is 401', async () => {
    const res = await fetch(`${node.url}/admin-api/dev-bundle?package=dev.local.x&version=0.1.0`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: wasm as BodyInit });
    expect(res.status).toBe(401);
  });
});

describe('a node with dev_install_root', () => {
  it('refuses to bundle (403), as it refuses uploaded bundles', async () => {
    const confined = await startTestNode({ network: null, configure: (cfg) => void (cfg.applications.devInstallRoot = '/nonexistent-dev-root') });
    try {
      const c = createClient({ baseUrl: confined.url, tokenStore: new MemoryTokenStore() });
      await c.auth.login({ username: confined.adminUser, password: confined.adminPassword });
      const err = await c.applications.bundleDev(wasm, { package: 'dev.local.x', version: '0.1.0' }).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(HttpError);
      expect((err as HttpError).status).toBe(403);
      expect((err as HttpError).message).toContain('dev_install_root');
    } finally {
      await confined.destroy();
    }
  }, 60_000);
});
