/**
 * The auth surface end to end: a real node on 127.0.0.1, driven through the project's SDK over
 * HTTP. Every row of the auth spec's Endpoints table, success and documented failures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, MemoryTokenStore, AuthRevokedError, type Client } from '../../../src/client/index.ts';
import { FakeClock } from '../../../src/auth/testkit.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';
import { httpError } from '../../helpers/status.ts';

let node: TestNode;
let clock: FakeClock;
const clientFor = (): Client => createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
let admin: Client;

const subOf = (jwt: string): string => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()).sub;

beforeAll(async () => {
  clock = new FakeClock(Date.now());
  node = await startTestNode({ clock });
  admin = clientFor();
  await admin.auth.login({ username: node.adminUser, password: node.adminPassword });
});
afterAll(async () => node?.destroy());

describe('public auth routes', () => {
  it('GET /auth/health reports alive storage and uptime', async () => {
    const h = await clientFor().auth.health();
    expect(h.status).toBe('alive');
    expect(h.storage).toBe(true);
    expect(typeof h.uptime_seconds).toBe('number');
  });

  it('GET /auth/providers lists a configured user_password provider', async () => {
    const p = await clientFor().auth.providers();
    expect(p.count).toBe(1);
    expect(p.providers[0]).toMatchObject({ name: 'user_password', type: 'credentials', configured: true });
  });

  it('POST /auth/token answers a token envelope; wrong credentials are 401 with the reason', async () => {
    const c = clientFor();
    const tokens = await c.auth.login({ username: 'dev', password: 'dev-password' });
    expect(tokens.accessToken.split('.')).toHaveLength(3);
    const e = await httpError(clientFor().auth.login({ username: 'dev', password: 'wrong-password' }));
    expect(e.status).toBe(401);
    expect(e.bodyText).toContain('Invalid username or password');
  });

  it('POST /auth/token with a missing field is 400 naming the field', async () => {
    const res = await fetch(`${node.url}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ auth_method: 'user_password', public_key: 'x', client_name: 'c', timestamp: 1 }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ data: null, error: 'Invalid request: body.provider_data is required' });
    const bad = await fetch(`${node.url}/auth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"auth_method":' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/^Invalid JSON/);
  });

  it('POST /auth/token rate-limits repeated failures with 429 and Retry-After', async () => {
    await admin.auth.createRootKey({ public_key: 'rate', auth_method: 'user_password', provider_data: { username: 'rate-user', password: 'rate-password' } });
    const body = (password: string, i: number) =>
      JSON.stringify({ auth_method: 'user_password', public_key: `changing-${i}`, client_name: 'c', timestamp: 1, provider_data: { username: 'rate-user', password } });
    const post = (password: string, i = 0) => fetch(`${node.url}/auth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(password, i) });
    for (let i = 0; i < 5; i++) expect((await post('wrong-password', i)).status).toBe(401);
    // a new public_key does not reset the limit (issue #17 finding 5)
    const locked = await post('wrong-password', 99);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    clock.advance(120);
    expect((await post('rate-password')).status).toBe(200);
    const rateKey = (await admin.auth.listRootKeys()).find((k) => k.public_key === 'rate')!;
    await admin.auth.deleteRootKey(rateKey.key_id); // later tests count the admin keys
  });

  it('POST /auth/refresh refuses a still-valid access token with "Access token still valid" and no X-Auth-Error', async () => {
    const c = clientFor();
    const t = await c.auth.login({ username: 'dev', password: 'dev-password' });
    const res = await fetch(`${node.url}/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ access_token: t.accessToken, refresh_token: t.refreshToken }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('x-auth-error')).toBeNull();
    expect(await res.text()).toContain('Access token still valid');
  });

  it('the SDK refreshes once on token_expired and retries; a replayed refresh token is token_reuse', async () => {
    const c = clientFor();
    const first = await c.auth.login({ username: 'dev', password: 'dev-password' });
    clock.advance(3600 + 61);
    const keys = await c.auth.listRootKeys();
    expect(keys.length).toBeGreaterThan(0);
    const second = await c.tokenStore.get();
    expect(second?.accessToken).not.toBe(first.accessToken);
    const replay = await fetch(`${node.url}/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ access_token: first.accessToken, refresh_token: first.refreshToken }),
    });
    expect(replay.status).toBe(401);
    expect(replay.headers.get('x-auth-error')).toBe('token_reuse');
    // the pair minted by the legitimate refresh is revoked with the family: the SDK clears it
    await expect(c.auth.listRootKeys()).rejects.toBeInstanceOf(AuthRevokedError);
    expect(await c.tokenStore.get()).toBeNull();
    await admin.auth.login({ username: 'dev', password: 'dev-password' });
  });

  it('HEAD /auth/validate: 200 with X-Auth-User and X-Auth-Permissions; 401 with a reason otherwise', async () => {
    const c = clientFor();
    const t = await c.auth.login({ username: 'dev', password: 'dev-password' });
    const ok = await c.auth.validate();
    expect(ok).toMatchObject({ valid: true, status: 200, user: subOf(t.accessToken), permissions: ['admin'] });
    expect((await c.auth.validate('not-a-jwt')).authError).toBe('invalid_token');
    const none = await fetch(`${node.url}/auth/validate`, { method: 'HEAD' });
    expect(none.status).toBe(401);
    expect(none.headers.get('x-auth-error')).toBe('missing_token');
    expect((await c.auth.validate(t.refreshToken)).valid).toBe(false);
  });

  it('POST /auth/logout retires the refresh token; a second logout is 401', async () => {
    const c = clientFor();
    const t = await c.auth.login({ username: 'dev', password: 'dev-password' });
    await expect(c.auth.retireRefreshToken(t.refreshToken)).resolves.toEqual({ success: true });
    const again = await httpError(c.auth.retireRefreshToken(t.refreshToken));
    expect(again.status).toBe(401);
  });

  it('the logout procedure of a client key retires, revokes and clears', async () => {
    const minted = await admin.auth.createClientKey({ permissions: ['application:list'] });
    const c = clientFor();
    await c.tokenStore.set({ accessToken: minted.data.access_token, refreshToken: minted.data.refresh_token });
    const result = await c.auth.logout();
    expect(result).toMatchObject({ loggedOut: true, revoked: true });
    expect(await c.tokenStore.get()).toBeNull();
    const keys = await admin.auth.listClientKeys();
    expect(keys.find((k) => k.client_id === subOf(minted.data.access_token))?.is_valid).toBe(false);
  });

  it('POST /auth/mock-token is refused on a production node', async () => {
    const e = await httpError(clientFor().auth.mockToken({ client_name: 'ci' }));
    expect(e.status).toBe(404);
    expect(e.bodyText).toContain('development nodes');
  });

  it('GET /auth/login is an HTML page', async () => {
    const res = await fetch(`${node.url}/auth/login`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.headers.get('cache-control')).toContain('no-store');
    expect(await res.text()).toMatch(/<form/i);
  });
});

describe('key administration', () => {
  it('GET /admin/identity names the service and version', async () => {
    const id = await admin.auth.identity();
    expect(id.service).toBe('hearth-auth');
    expect(id.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(id.providers).toEqual(['user_password']);
  });

  it('root keys: list, create, permissions get/put, delete, with Unix-second timestamps', async () => {
    const before = await admin.auth.listRootKeys();
    expect(before[0]).toMatchObject({ auth_method: 'user_password', revoked_at: null, permissions: ['admin'] });
    expect(Number.isInteger(before[0].created_at)).toBe(true);
    expect(before[0].created_at).toBeLessThan(1e11);
    expect(
      await admin.auth.createRootKey({ public_key: 'ops', auth_method: 'user_password', provider_data: { username: 'ops', password: 'ops-password' } }),
    ).toEqual({ status: true, message: 'Key was created' });
    const ops = clientFor();
    const opsTokens = await ops.auth.login({ username: 'ops', password: 'ops-password' });
    const opsId = subOf(opsTokens.accessToken);
    expect((await admin.auth.getKeyPermissions(opsId)).permissions).toEqual(['admin']);
    expect((await admin.auth.updateKeyPermissions(opsId, { add: ['application:list'], remove: ['admin'] })).permissions).toEqual([
      'application:list',
    ]);
    // removals take effect on the next request
    const denied = await httpError(ops.auth.listRootKeys());
    expect(denied.status).toBe(403);
    expect(denied.headers.get('x-auth-error')).toBe('permission_denied');
    const del = await admin.auth.deleteRootKey(opsId);
    expect(del).toMatchObject({ key_id: opsId });
    expect((await httpError(admin.auth.getKeyPermissions(opsId))).status).toBe(404);
    const revoked = await httpError(ops.auth.identity());
    expect(revoked.status).toBe(401);
    expect(revoked.headers.get('x-auth-error')).toBe('token_revoked');
  });

  it('the last active admin key cannot be deleted', async () => {
    const keys = await admin.auth.listRootKeys();
    const adminId = subOf((await admin.tokenStore.get())!.accessToken);
    expect(keys.some((k) => k.key_id === adminId)).toBe(true);
    const refused = await httpError(admin.auth.deleteRootKey(adminId));
    expect(refused.status).toBe(409); // as POST /admin/revoke refuses it (issue #23)
    expect((await httpError(admin.auth.revoke(adminId))).status).toBe(409);
  });

  it('client keys: mint with ttl and binding, list with is_valid, delete', async () => {
    const minted = await admin.auth.createClientKey({ context_id: 'a'.repeat(64), context_identity: 'b'.repeat(64), permissions: ['context:execute'], ttl_secs: 3600 });
    const clientId = subOf(minted.data.access_token);
    const listed = (await admin.auth.listClientKeys()).find((k) => k.client_id === clientId)!;
    expect(listed).toMatchObject({ is_valid: true, revoked_at: null, permissions: [`context[${'a'.repeat(64)},${'b'.repeat(64)}]`, 'context:execute'] });
    const rootId = listed.root_key_id;
    const del = await admin.auth.deleteClientKey(rootId, clientId);
    expect(del.message).toBe('Client key revoked successfully');
    expect((await admin.auth.listClientKeys()).find((k) => k.client_id === clientId)?.is_valid).toBe(false);
    expect((await httpError(admin.auth.deleteClientKey(rootId, clientId))).status).toBe(404);
  });

  it('client-key grant restrictions answer 400', async () => {
    for (const req of [
      { permissions: ['keys:*'] },
      { context_id: 'c'.repeat(64), permissions: ['admin'] },
      { permissions: ['no-such:permission'] },
      { permissions: ['context:list'], ttl_secs: -5 },
    ]) {
      const e = await httpError(admin.auth.createClientKey(req));
      expect(e.status, JSON.stringify(req)).toBe(400);
    }
  });

  it('POST /admin/revoke revokes any key; an unknown id is 404', async () => {
    const minted = await admin.auth.createClientKey({ permissions: ['context:list'] });
    const id = subOf(minted.data.access_token);
    expect(await admin.auth.revoke(id)).toEqual({ success: true, message: 'Tokens revoked successfully' });
    expect((await httpError(admin.auth.revoke(id))).status).toBe(404);
  });

  it('/admin routes need a bearer token: 401 missing_token', async () => {
    const res = await fetch(`${node.url}/admin/keys`);
    expect(res.status).toBe(401);
    expect(res.headers.get('x-auth-error')).toBe('missing_token');
    expect(res.headers.get('access-control-expose-headers')).toContain('x-auth-error');
  });
});

describe('cross-cutting HTTP behaviour', () => {
  it('answers CORS preflights of loopback origins and exposes the auth headers', async () => {
    const res = await fetch(`${node.url}/admin-api/contexts`, {
      method: 'OPTIONS',
      headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(res.headers.get('access-control-allow-headers')).toBe('authorization');
  });

  it('gives every answer a request id and unknown routes a JSON 404', async () => {
    const res = await fetch(`${node.url}/no/such/route`);
    expect(res.status).toBe(404);
    expect(res.headers.get('x-request-id')).toMatch(/^[\w-]+-[0-9a-z]+$/);
    expect((await res.json()).error).toContain('/no/such/route');
  });

  it('serves the public admin-api probes', async () => {
    const c = clientFor();
    expect(await c.admin.health()).toEqual({ status: 'alive' });
    expect(await c.admin.ready()).toEqual({ status: 'ready' });
    expect(await c.admin.isAuthed()).toEqual({ status: 'alive' });
  });
});
