/**
 * `PUT /admin-api/install-dev-application/bundle` (hearth; issue #16): a dev install of a bundle
 * sent as the body — what the dashboard uses for a file picked in the browser. The SDK's
 * `applications.installBundle` over real HTTP, and the hostile cases: not a bundle, empty, the
 * wrong content type, no token, a key without `admin`, and a node that confines dev installs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, MemoryTokenStore, type Client } from '../../../src/client/index.ts';
import { makeBundle, testAbi, tinyWasm, type MadeBundle } from '../../helpers/bundles.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';
import { httpError } from '../../helpers/status.ts';

let node: TestNode;
let confined: TestNode;
let admin: Client;
let bundle: MadeBundle;
let root: string;

async function login(n: TestNode): Promise<Client> {
  const client = createClient({ baseUrl: n.url, tokenStore: new MemoryTokenStore() });
  await client.auth.login({ username: n.adminUser, password: n.adminPassword });
  return client;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hearth-upload-'));
  [node, confined, bundle] = await Promise.all([
    startTestNode(),
    startTestNode({ configure: (cfg) => (cfg.applications.devInstallRoot = root) }),
    makeBundle({ wasm: tinyWasm({ abi: testAbi() }), package: 'com.hearth.upload', version: '1.0.0' }),
  ]);
  admin = await login(node);
});
afterAll(async () => {
  await Promise.all([node?.destroy(), confined?.destroy()]);
  await rm(root, { recursive: true, force: true });
});

describe('installing an uploaded bundle', () => {
  it('installs it, reports progress and lists it with an upload source', async () => {
    const seen: number[] = [];
    const { applicationId } = await admin.applications.installBundle(bundle.bytes, { onProgress: (loaded) => seen.push(loaded) });
    expect(applicationId).toBe(bundle.applicationId);
    expect(seen[0]).toBe(0);
    expect(seen.at(-1)).toBe(bundle.bytes.length);
    const app = await admin.applications.get(applicationId);
    expect(app.package).toBe('com.hearth.upload');
    expect(app.source).toMatch(/^upload:sha256:[0-9a-f]{64}$/);
  });

  it('refuses bytes that are not a signed bundle with 400', async () => {
    const err = await httpError(admin.applications.installBundle(new TextEncoder().encode('not a bundle')));
    expect(err.status).toBe(400);
  });

  it('refuses an empty body with 400 naming what to send', async () => {
    const err = await httpError(admin.applications.installBundle(new Uint8Array(0)));
    expect(err.status).toBe(400);
    expect(err.errorText).toContain('.mpk');
  });

  it('refuses a JSON body with 415', async () => {
    const tokens = await admin.tokenStore.get();
    const res = await fetch(`${node.url}/admin-api/install-dev-application/bundle`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${tokens!.accessToken}`, 'content-type': 'application/json' },
      body: '{"path":"/etc/passwd"}',
    });
    expect(res.status).toBe(415);
  });

  it('needs a token (401) and the admin permission (403)', async () => {
    const anonymous = createClient({ baseUrl: node.url });
    expect((await httpError(anonymous.applications.installBundle(bundle.bytes))).status).toBe(401);
    const { data } = await admin.auth.createClientKey({ permissions: ['application:install'] });
    const scoped = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore({ accessToken: data.access_token, refreshToken: data.refresh_token }) });
    expect((await httpError(scoped.applications.installBundle(bundle.bytes))).status).toBe(403);
  });

  it('is refused (403) by a node that takes dev installs only from its dev_install_root', async () => {
    const err = await httpError((await login(confined)).applications.installBundle(bundle.bytes));
    expect(err.status).toBe(403);
    expect(err.errorText).toContain('dev_install_root');
  });
});
