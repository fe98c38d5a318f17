import { describe, expect, it, vi } from 'vitest';
import { DecodeError, HttpError, NetworkError } from './errors.ts';
import { empty, fakeFetch, fakeJwt, json, type Handler } from './fake-fetch.ts';
import { createClient } from './index.ts';
import { clientIdOf, decodeJwtClaims, tokensFromPair } from './jwt.ts';
import { MemoryTokenStore, type Tokens } from './token-store.ts';

const BASE = 'http://node.test:2428';
const CLIENT_ID = '3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b';
const ROOT_ACCESS = fakeJwt({ sub: 'a'.repeat(64), exp: 1_900_000_000, token_type: 'access' });
const CLIENT_ACCESS = fakeJwt({ sub: CLIENT_ID, exp: 1_900_000_900, token_type: 'access' });
const pair = (access_token: string, refresh_token = 'refresh-1') => ({
  data: { access_token, refresh_token, error: null },
  error: null,
});

function setup(routes: Record<string, Handler>, tokens: Tokens | null = { accessToken: ROOT_ACCESS, refreshToken: 'r' }) {
  const fake = fakeFetch(routes);
  const tokenStore = new MemoryTokenStore(tokens);
  const node = createClient({ baseUrl: BASE, fetch: fake.fetch, tokenStore });
  return { fake, tokenStore, node };
}

describe('jwt helpers', () => {
  it('decodes base64url payloads, including non-ASCII and unpadded ones', () => {
    const token = fakeJwt({ sub: 'é✓/?>~~', exp: 5 });
    expect(decodeJwtClaims(token)).toEqual({ sub: 'é✓/?>~~', exp: 5 });
    expect(decodeJwtClaims('not-a-jwt')).toBeNull();
    expect(tokensFromPair({ access_token: token, refresh_token: 'r' })).toEqual({
      accessToken: token,
      refreshToken: 'r',
      expiresAt: 5000,
    });
  });

  it('recognises client keys by a UUID sub only', () => {
    expect(clientIdOf(CLIENT_ACCESS)).toBe(CLIENT_ID);
    expect(clientIdOf(ROOT_ACCESS)).toBeUndefined();
    expect(clientIdOf(fakeJwt({ sub: 'mock_ci_1700000000' }))).toBeUndefined();
  });
});

describe('AuthApi login and tokens', () => {
  it('login posts the exact TokenRequest without a bearer and stores the pair', async () => {
    vi.useFakeTimers({ now: 1_755_990_000_500, toFake: ['Date'] });
    try {
      const { fake, node, tokenStore } = setup({ 'POST /auth/token': () => json(pair(ROOT_ACCESS)) });
      const tokens = await node.auth.login({ username: 'dev', password: 'dev-password' });
      const [req] = fake.requests;
      expect(req.headers.has('authorization')).toBe(false);
      expect(req.headers.get('content-type')).toBe('application/json');
      expect(req.body).toEqual({
        auth_method: 'user_password',
        public_key: 'dev',
        client_name: 'hearth-client',
        permissions: [],
        timestamp: 1_755_990_000,
        provider_data: { username: 'dev', password: 'dev-password' },
      });
      expect(tokens).toEqual({ accessToken: ROOT_ACCESS, refreshToken: 'refresh-1', expiresAt: 1_900_000_000_000 });
      expect(tokenStore.get()).toEqual(tokens);
    } finally {
      vi.useRealTimers();
    }
  });

  it('login surfaces bad credentials as HttpError and a tokenless 2xx as DecodeError', async () => {
    const { node, fake, tokenStore } = setup({
      'POST /auth/token': () => json({ data: null, error: 'Authentication failed: Invalid username or password' }, 401),
    });
    const err = (await node.auth.login({ username: 'wrong', password: 'wrong', clientName: 'cli' }).catch((e) => e)) as HttpError;
    expect(err.status).toBe(401);
    expect(err.message).toContain('Invalid username or password');
    expect(fake.calls('POST /auth/refresh')).toHaveLength(0);
    // the reference's doubled wording is said once in the message; errorText keeps the node's words
    fake.on('POST /auth/token', () => json({ data: null, error: 'Authentication failed: Authentication failed: Invalid username or password' }, 401));
    const doubled = (await node.auth.login({ username: 'wrong', password: 'wrong' }).catch((e) => e)) as HttpError;
    expect(doubled.message).toMatch(/: Authentication failed: Invalid username or password$/);
    expect(doubled.errorText).toBe('Authentication failed: Authentication failed: Invalid username or password');
    expect(tokenStore.get()?.accessToken).toBe(ROOT_ACCESS);
    fake.on('POST /auth/token', () => json({ data: null, error: 'Access token still valid' }));
    await expect(node.auth.login({ username: 'dev', password: 'x' })).rejects.toBeInstanceOf(DecodeError);
  });

  it('mockToken posts the request and stores the pair unless store: false', async () => {
    const { fake, node, tokenStore } = setup({ 'POST /auth/mock-token': () => json(pair(CLIENT_ACCESS, 'm')) }, null);
    await node.auth.mockToken({ client_name: 'ci', permissions: ['admin'] }, { store: false });
    expect(tokenStore.get()).toBeNull();
    const tokens = await node.auth.mockToken({ client_name: 'ci' });
    expect(tokenStore.get()).toEqual(tokens);
    expect(fake.requests[0].body).toEqual({ client_name: 'ci', permissions: ['admin'] });
  });

  it('createClientKey returns the whole TokenResponse and does not touch the session', async () => {
    const { fake, node, tokenStore } = setup({ 'POST /admin/client-key': () => json(pair(CLIENT_ACCESS, 'c')) });
    const res = await node.auth.createClientKey({ context_id: 'ctx', permissions: ['context:execute'], ttl_secs: 3600 });
    expect(res).toEqual(pair(CLIENT_ACCESS, 'c'));
    expect(fake.requests[0].headers.get('authorization')).toBe(`Bearer ${ROOT_ACCESS}`);
    expect(fake.requests[0].body).toEqual({ context_id: 'ctx', permissions: ['context:execute'], ttl_secs: 3600 });
    expect(tokenStore.get()?.accessToken).toBe(ROOT_ACCESS);
    await node.auth.createClientKey();
    expect(fake.requests[1].bodyText).toBe('{}');
  });
});

describe('AuthApi routes and envelopes', () => {
  const cases: Array<[string, (n: ReturnType<typeof setup>['node']) => Promise<unknown>, string, unknown, unknown]> = [
    ['health', (n) => n.auth.health(), 'GET /auth/health', undefined, { status: 'alive', storage: true, uptime_seconds: 42 }],
    ['identity', (n) => n.auth.identity(), 'GET /admin/identity', undefined, { service: 'calimero-auth', version: '0.11.0-rc.83', authentication_mode: 'forward', providers: ['user_password'] }],
    ['providers', (n) => n.auth.providers(), 'GET /auth/providers', undefined, { providers: [], count: 0 }],
    ['revoke', (n) => n.auth.revoke(CLIENT_ID), 'POST /admin/revoke', { client_id: CLIENT_ID }, { success: true, message: 'Tokens revoked successfully' }],
    ['listRootKeys', (n) => n.auth.listRootKeys(), 'GET /admin/keys', undefined, [{ key_id: 'k', public_key: 'dev', auth_method: 'user_password', created_at: 1755990000, revoked_at: null, permissions: ['admin'] }]],
    ['createRootKey', (n) => n.auth.createRootKey({ public_key: 'u', auth_method: 'user_password', provider_data: { username: 'u', password: 'password1' } }), 'POST /admin/keys', { public_key: 'u', auth_method: 'user_password', provider_data: { username: 'u', password: 'password1' } }, { status: true, message: 'Key was created' }],
    ['deleteRootKey', (n) => n.auth.deleteRootKey('k/1'), 'DELETE /admin/keys/k%2F1', undefined, { key_id: 'k/1', revoked_at: 1755990000 }],
    ['deleteRootKey (last key)', (n) => n.auth.deleteRootKey('k'), 'DELETE /admin/keys/k', undefined, { status: false, message: 'Cannot delete the last active root key' }],
    ['getKeyPermissions', (n) => n.auth.getKeyPermissions('k'), 'GET /admin/keys/k/permissions', undefined, { permissions: ['admin'] }],
    ['updateKeyPermissions', (n) => n.auth.updateKeyPermissions('k', { add: ['blob'], remove: ['admin'] }), 'PUT /admin/keys/k/permissions', { add: ['blob'], remove: ['admin'] }, { permissions: ['blob'] }],
    ['listClientKeys', (n) => n.auth.listClientKeys(), 'GET /admin/keys/clients', undefined, [{ client_id: CLIENT_ID, root_key_id: 'k', name: 'Context Client - ctx (pk)', permissions: [], created_at: 1, revoked_at: null, is_valid: true }]],
    ['deleteClientKey', (n) => n.auth.deleteClientKey('k', CLIENT_ID), `DELETE /admin/keys/k/clients/${CLIENT_ID}`, undefined, { message: 'Client key revoked successfully', revoked_at: 1755990000 }],
  ];

  it.each(cases)('%s calls the route with the bearer and unwraps data', async (_name, call, route, body, payload) => {
    const { fake, node } = setup({ [route]: () => json({ data: payload, error: null }) });
    await expect(call(node)).resolves.toEqual(payload);
    expect(fake.requests).toHaveLength(1);
    const [req] = fake.requests;
    expect(`${req.method} ${new URL(req.url).pathname}`).toBe(route);
    expect(req.headers.get('authorization')).toBe(`Bearer ${ROOT_ACCESS}`);
    expect(req.body).toEqual(body);
  });

  it('loginPage returns the HTML text', async () => {
    const { node } = setup({ 'GET /auth/login': () => new Response('<html>login</html>', { headers: { 'content-type': 'text/html' } }) });
    await expect(node.auth.loginPage()).resolves.toBe('<html>login</html>');
  });

  it('health keeps a huge uptime exact', async () => {
    const { node } = setup({ 'GET /auth/health': () => json('{"data":{"status":"alive","storage":true,"uptime_seconds":18446744073709551615},"error":null}') });
    await expect(node.auth.health()).resolves.toEqual({ status: 'alive', storage: true, uptime_seconds: 2n ** 64n - 1n });
  });
});

describe('AuthApi.validate', () => {
  it('reads user and permissions from the headers of a 200', async () => {
    const { fake, node } = setup({
      'HEAD /auth/validate': () => empty(200, { 'x-auth-user': 'k', 'x-auth-permissions': 'admin,blob' }),
    });
    await expect(node.auth.validate()).resolves.toEqual({ valid: true, status: 200, user: 'k', permissions: ['admin', 'blob'], authError: null });
    expect(fake.requests[0].headers.get('authorization')).toBe(`Bearer ${ROOT_ACCESS}`);
  });

  it('never throws for 401/403 and never refreshes or clears the session', async () => {
    const { fake, node, tokenStore } = setup({ 'HEAD /auth/validate': () => empty(401, { 'x-auth-error': 'token_expired' }) });
    await expect(node.auth.validate('other')).resolves.toEqual({ valid: false, status: 401, user: null, permissions: [], authError: 'token_expired' });
    expect(fake.requests[0].headers.get('authorization')).toBe('Bearer other');
    fake.on('HEAD /auth/validate', () => empty(403, { 'x-auth-error': 'token_revoked' }));
    await expect(node.auth.validate()).resolves.toMatchObject({ valid: false, status: 403, authError: 'token_revoked' });
    expect(fake.calls('POST /auth/refresh')).toHaveLength(0);
    expect(tokenStore.get()).not.toBeNull();
  });

  it('sends no header when no token is given or stored', async () => {
    const { fake, node } = setup({ 'HEAD /auth/validate': () => empty(401, { 'x-auth-error': 'missing_token' }) }, null);
    await expect(node.auth.validate()).resolves.toMatchObject({ valid: false, authError: 'missing_token' });
    expect(fake.requests[0].headers.has('authorization')).toBe(false);
  });

  it('asks with GET or POST when told to, reading the same headers', async () => {
    const ok = () => json({ data: '', error: null }, 200, { 'x-auth-user': 'k' });
    const { fake, node } = setup({ 'GET /auth/validate': ok, 'POST /auth/validate': () => empty(401, { 'x-auth-error': 'invalid_token' }) });
    await expect(node.auth.validate(undefined, { method: 'GET' })).resolves.toMatchObject({ valid: true, user: 'k', permissions: [] });
    await expect(node.auth.validate('bad', { method: 'POST' })).resolves.toMatchObject({ valid: false, status: 401, authError: 'invalid_token' });
    expect(fake.requests.map((r) => r.method)).toEqual(['GET', 'POST']);
  });
});

describe('AuthApi.logout (auth spec rule 5)', () => {
  it('runs (a) then (b) with the client id from the token sub, then (c)', async () => {
    const { fake, node, tokenStore } = setup(
      {
        'POST /auth/logout': () => json({ data: { success: true }, error: null }),
        'POST /admin/revoke': () => json({ data: { success: true, message: 'Tokens revoked successfully' }, error: null }),
      },
      { accessToken: CLIENT_ACCESS, refreshToken: 'client-refresh' },
    );
    await expect(node.auth.logout()).resolves.toEqual({ loggedOut: true, revoked: true, clientId: CLIENT_ID, errors: [] });
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /auth/logout', 'POST /admin/revoke']);
    expect(fake.requests[0].body).toEqual({ refresh_token: 'client-refresh' });
    expect(fake.requests[1].body).toEqual({ client_id: CLIENT_ID });
    expect(fake.requests[1].headers.get('authorization')).toBe(`Bearer ${CLIENT_ACCESS}`);
    expect(tokenStore.get()).toBeNull();
  });

  it('still clears the store when (a) answers 404 and (b) answers 401, without refreshing', async () => {
    const onAuthRevoked = vi.fn();
    const fake = fakeFetch({
      'POST /admin/revoke': () => empty(401, { 'x-auth-error': 'token_expired' }),
    });
    const tokenStore = new MemoryTokenStore({ accessToken: CLIENT_ACCESS, refreshToken: 'rr' });
    const node = createClient({ baseUrl: BASE, fetch: fake.fetch, tokenStore, onAuthRevoked });
    const result = await node.auth.logout();
    expect(result).toMatchObject({ loggedOut: false, revoked: false, clientId: CLIENT_ID });
    expect(result.errors.map((e) => (e as HttpError).status)).toEqual([404, 401]);
    expect(fake.calls('POST /auth/refresh')).toHaveLength(0);
    expect(tokenStore.get()).toBeNull();
    expect(onAuthRevoked).not.toHaveBeenCalled();
  });

  it('skips (b) for a root-key session unless a client id is passed', async () => {
    const { fake, node, tokenStore } = setup({ 'POST /auth/logout': () => json({ data: { success: true }, error: null }) });
    await expect(node.auth.logout()).resolves.toMatchObject({ loggedOut: true, revoked: null, clientId: null });
    expect(fake.calls('POST /admin/revoke')).toHaveLength(0);
    expect(tokenStore.get()).toBeNull();
    await tokenStore.set({ accessToken: ROOT_ACCESS, refreshToken: 'r' });
    await node.auth.logout({ clientId: 'explicit-id' });
    expect(fake.calls('POST /admin/revoke')[0].body).toEqual({ client_id: 'explicit-id' });
  });

  it('clears the store even when the node is unreachable', async () => {
    const failing = (() => Promise.reject(new TypeError('connect ECONNREFUSED'))) as typeof fetch;
    const tokenStore = new MemoryTokenStore({ accessToken: CLIENT_ACCESS, refreshToken: 'rr' });
    const node = createClient({ baseUrl: BASE, fetch: failing, tokenStore });
    const result = await node.auth.logout();
    expect(result.errors).toHaveLength(2);
    expect(result.errors[0]).toBeInstanceOf(NetworkError);
    expect(tokenStore.get()).toBeNull();
  });
});
