/**
 * Conformance: the auth surface (`/auth/*`, `/admin/*`; auth spec "Endpoints") through the SDK, on a
 * development node (for `/auth/mock-token`) with a settable clock (a refresh needs an expired
 * access token). Every answer is checked against the node's OpenAPI document.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FakeClock } from '../../src/auth/testkit.ts';
import type { Client } from '../../src/client/index.ts';
import { Conformance } from '../helpers/conformance.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { httpError } from '../helpers/status.ts';

let node: TestNode;
let conformance: Conformance;
let clock: FakeClock;

const subOf = (jwt: string): string => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()).sub;

beforeAll(async () => {
  clock = new FakeClock(Date.now());
  node = await startTestNode({ dev: true, clock });
  conformance = await Conformance.load(node.url);
});
afterAll(() => node.destroy());

async function loggedIn(): Promise<{ client: Client; keyId: string }> {
  const client = conformance.client();
  const tokens = await client.auth.login({ username: node.adminUser, password: node.adminPassword });
  return { client, keyId: subOf(tokens.accessToken) };
}

it('answers every public auth route as documented', async () => {
  const anonymous = conformance.client();
  expect(await anonymous.auth.health()).toMatchObject({ status: 'alive', storage: true });
  const providers = await anonymous.auth.providers();
  expect(providers.count).toBe(1);
  expect(providers.providers[0]).toMatchObject({ name: 'user_password', configured: true });
  expect(await anonymous.auth.loginPage()).toContain('<form id="login"');
  // A callback that may not receive tokens gets the page without its form (documented 400, HTML);
  // a repeated parameter is no 400 of the validator: the first value counts.
  const login = (query: string) => conformance.fetch(`${node.url}/auth/login?${query}`);
  const refused = await login(`callback-url=${encodeURIComponent('https://evil.example/cb')}`);
  expect(refused.status).toBe(400);
  expect(await refused.text()).not.toContain('<form id="login"');
  const loopback = encodeURIComponent('http://127.0.0.1:9/cb');
  expect((await login(`callback-url=${loopback}&callback-url=${loopback}`)).status).toBe(200);

  const wrong = await httpError(anonymous.auth.login({ username: node.adminUser, password: 'not-the-password' }));
  expect(wrong.status).toBe(401);

  const { client, keyId } = await loggedIn();
  for (const method of ['GET', 'POST'] as const) {
    expect(await client.auth.validate(undefined, { method })).toMatchObject({ valid: true, status: 200, user: keyId, permissions: ['admin'] });
  }
  expect(await anonymous.auth.validate('not-a-jwt', { method: 'GET' })).toMatchObject({ valid: false, status: 401, authError: 'invalid_token' });

  const mockClient = conformance.client();
  const mock = await mockClient.auth.mockToken({ client_name: 'ci', permissions: ['context:list'] });
  expect(subOf(mock.accessToken)).toMatch(/^mock_ci_/);
  expect((await mockClient.auth.validate(undefined, { method: 'POST' })).permissions).toEqual(['context:list']);

  // Only an expired access token may be refreshed.
  const before = await client.tokenStore.get();
  clock.advance(3600 + 61);
  const renewed = await client.auth.refresh();
  expect(renewed.accessToken).not.toBe(before?.accessToken);
  expect(subOf(renewed.accessToken)).toBe(keyId);

  const out = await client.auth.logout();
  expect(out).toMatchObject({ loggedOut: true, revoked: null, errors: [] });
  expect(await client.tokenStore.get()).toBeNull();
});

it('answers every key administration route as documented', async () => {
  const { client: admin, keyId } = await loggedIn();
  expect(await admin.auth.identity()).toMatchObject({ service: 'hearth-auth', authentication_mode: 'embedded', providers: ['user_password'] });

  const created = await admin.auth.createRootKey({
    public_key: 'operator',
    auth_method: 'user_password',
    provider_data: { username: 'operator', password: 'operator-password' },
  });
  expect(created).toEqual({ status: true, message: 'Key was created' });
  const roots = await admin.auth.listRootKeys();
  const operator = roots.find((k) => k.public_key === 'operator');
  expect(operator).toMatchObject({ auth_method: 'user_password', revoked_at: null, permissions: ['admin'] });
  expect(roots.map((k) => k.key_id)).toContain(keyId);
  const operatorId = operator!.key_id;

  expect(await admin.auth.getKeyPermissions(operatorId)).toEqual({ permissions: ['admin'] });
  expect(await admin.auth.updateKeyPermissions(operatorId, { add: ['context:list'] })).toEqual({ permissions: ['admin', 'context:list'] });
  expect((await httpError(admin.auth.getKeyPermissions('no-such-key'))).status).toBe(404);

  const minted = await admin.auth.createClientKey({ permissions: ['context:list'], ttl_secs: 3600 });
  expect(minted.data).not.toHaveProperty('client_id'); // the TokenResponse exactly: the id is the token's `sub`
  const clientId = subOf(minted.data.access_token);
  const refused = await httpError(admin.auth.createClientKey({ permissions: ['keys:delete'] }));
  expect(refused.status).toBe(400);

  const clients = await admin.auth.listClientKeys();
  expect(clients.find((k) => k.client_id === clientId)).toMatchObject({ root_key_id: keyId, permissions: ['context:list'], is_valid: true });
  // the spec's ClientKey exactly; hearth's expiry and binding only when asked for
  expect(clients.find((k) => k.client_id === clientId)).not.toHaveProperty('expires_at');
  const detailed = (await admin.auth.listClientKeysWithDetails()).find((k) => k.client_id === clientId)!;
  expect(detailed.expires_at! - detailed.created_at).toBe(3600);
  expect(detailed.application_id).toBeNull();
  const removed = await admin.auth.deleteClientKey(keyId, clientId);
  expect(removed).toMatchObject({ message: 'Client key revoked successfully' });
  expect(typeof removed.revoked_at).toBe('number');
  expect((await admin.auth.listClientKeys()).find((k) => k.client_id === clientId)?.is_valid).toBe(false);

  const second = subOf((await admin.auth.createClientKey({ permissions: ['context:list'] })).data.access_token);
  expect(await admin.auth.revoke(second)).toEqual({ success: true, message: 'Tokens revoked successfully' });

  const deleted = await admin.auth.deleteRootKey(operatorId);
  expect(deleted).toMatchObject({ key_id: operatorId });
  expect((await admin.auth.listRootKeys()).find((k) => k.key_id === operatorId)?.revoked_at).toEqual(expect.any(Number));
  // The last active admin key is kept: 409 as POST /admin/revoke answers it (issue #23; the
  // reference answers 200 with status false, auth-wire §2.9).
  expect((await httpError(admin.auth.deleteRootKey(keyId))).status).toBe(409);

  conformance.assertAreaCovered('auth');
});
