/**
 * Restart persistence of the auth state: accounts, client keys, permission changes, revocations
 * and used refresh tokens all survive a node restart on the same home.
 */
import { afterAll, expect, it } from 'vitest';
import { createClient, MemoryTokenStore } from '../../../src/client/index.ts';
import { FakeClock } from '../../../src/auth/testkit.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';

let node: TestNode;
afterAll(async () => node?.destroy());

const subOf = (jwt: string): string => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()).sub;

it('keeps keys, permissions, revocations and used refresh tokens across a restart', async () => {
  const clock = new FakeClock(Date.now());
  node = await startTestNode({ clock });
  const c = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  const login = await c.auth.login({ username: node.adminUser, password: node.adminPassword });
  await c.auth.createRootKey({ public_key: 'ops', auth_method: 'user_password', provider_data: { username: 'ops', password: 'ops-password' } });
  const kept = (await c.auth.createClientKey({ permissions: ['context:list', 'blob:list'] })).data;
  const gone = (await c.auth.createClientKey({ permissions: ['context:list'] })).data;
  await c.auth.updateKeyPermissions(subOf(kept.access_token), { remove: ['blob:list'] });
  await c.auth.revoke(subOf(gone.access_token));
  clock.advance(3600 + 61);
  await c.auth.refresh(); // uses login's refresh token
  const usedRefresh = login.refreshToken;

  node = await node.restart();
  const c2 = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  await c2.auth.login({ username: 'ops', password: 'ops-password' });
  expect((await c2.auth.getKeyPermissions(subOf(kept.access_token))).permissions).toEqual(['context:list']);
  const clients = await c2.auth.listClientKeys();
  expect(clients.find((k) => k.client_id === subOf(gone.access_token))?.is_valid).toBe(false);
  expect(clients.find((k) => k.client_id === subOf(kept.access_token))?.is_valid).toBe(true);
  const replay = await fetch(`${node.url}/auth/refresh`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ access_token: login.accessToken, refresh_token: usedRefresh }),
  });
  expect(replay.status).toBe(401);
  expect(replay.headers.get('x-auth-error')).toBe('token_reuse');
});
