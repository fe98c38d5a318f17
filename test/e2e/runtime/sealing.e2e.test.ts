/**
 * `seal_to` / `open_sealed` through a real node (docs/runtime.md "Sealing"): a context of the
 * `sealer` test app seals to this node's account root and opens it in the same call, over
 * /jsonrpc — proving the node wires its identity into the runtime — and an envelope sealed to
 * another account's root does not open here.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, MemoryTokenStore, type Client } from '../../../src/client/index.ts';
import { makeBundle } from '../../helpers/bundles.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';
import { rawPublicKeyBytes } from '../../../src/crypto/keys.ts';

let node: TestNode;
let c: Client;
let ctx: string;

beforeAll(async () => {
  node = await startTestNode();
  c = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  await c.auth.login({ username: node.adminUser, password: node.adminPassword });
  const bundle = await makeBundle({ wasm: await buildTestApp('sealer'), package: 'com.hearth.sealer' });
  const appId = (await c.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
  const ns = (await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: appId } })).namespaceId;
  ctx = (await c.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
}, 180_000);
afterAll(async () => node?.destroy());

describe('sealing in a context', () => {
  it('seals to this node’s account root and opens it again in a call the node executes', async () => {
    const me = await c.http.data<{ accountRootPublicKey: string }>('/admin-api/identity');
    expect(me.accountRootPublicKey).toMatch(/^[0-9a-f]{64}$/);
    expect(await c.rpc.execute(ctx, 'seal_open', { key: me.accountRootPublicKey, text: 'queen of hearts' })).toEqual({
      sealed: 1,
      opened: 1,
      text: 'queen of hearts',
    });
  });

  it('does not open what is sealed to another account’s root; refuses a key that is no point', async () => {
    const other = rawPublicKeyBytes(generateKeyPairSync('ed25519').publicKey).toString('hex');
    expect(await c.rpc.execute(ctx, 'seal_open', { key: other, text: 'not yours' })).toEqual({ sealed: 1, opened: 0, text: null });
    expect(await c.rpc.execute(ctx, 'seal_open', { key: '02' + '00'.repeat(31), text: 'x' })).toEqual({ sealed: 0, opened: 0, text: null });
  });
});
