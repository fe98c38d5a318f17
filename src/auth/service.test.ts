import { describe, expect, it } from 'vitest';
import { HearthError } from '../errors.ts';
import { authKit, subOf } from './testkit.ts';

async function rejection(p: Promise<unknown>): Promise<HearthError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HearthError);
  return err as HearthError;
}

/** Logs `dev` in with a client name that is a URL: the tokens are bound to that node. */
const loginBoundTo = (k: Awaited<ReturnType<typeof authKit>>, nodeUrl: string) =>
  k.auth.login({ auth_method: 'user_password', public_key: 'dev', client_name: nodeUrl, provider_data: { username: 'dev', password: 'dev-password' } });

describe('login', () => {
  it('issues a root-key pair with 1 h access and 30 d refresh lifetimes', async () => {
    const k = await authKit();
    const pair = await k.login();
    const access = await k.tokens.verify(pair.access_token, 'access');
    const refresh = await k.tokens.verify(pair.refresh_token, 'refresh');
    expect(access.exp - access.iat).toBe(3600);
    expect(refresh.exp - refresh.iat).toBe(30 * 24 * 3600);
    expect(access.permissions).toEqual(['admin']);
    expect(access.iss).toBe('calimero-auth');
    expect(access.aud).toBe('calimero-auth');
  });

  it('throttles by username and address, not by the caller-chosen public_key (issue #17 finding 5)', async () => {
    const k = await authKit();
    const attempt = (public_key: string, address: string, password = 'wrong-password') =>
      k.auth.login({ auth_method: 'user_password', public_key, client_name: 'c', provider_data: { username: 'dev', password } }, { host: undefined, address });
    for (let i = 0; i < 5; i++) expect((await rejection(attempt(`pk-${i}`, '10.0.0.9'))).kind).toBe('unauthenticated');
    // a fresh public_key does not reset the limit
    expect((await rejection(attempt('pk-new', '10.0.0.9'))).kind).toBe('rate_limited');
    // the real user elsewhere is not locked out by the stranger
    await expect(attempt('dev', '10.0.0.1', 'dev-password')).resolves.toHaveProperty('access_token');
  });

  it('locks each repeated lockout of a bucket twice as long', async () => {
    const k = await authKit();
    const bad = () => k.auth.login({ auth_method: 'user_password', public_key: 'x', client_name: 'c', provider_data: { username: 'dev', password: 'nope-nope' } }, { host: undefined, address: 'a' });
    for (let i = 0; i < 5; i++) await rejection(bad());
    expect((await rejection(bad())).extra.retryAfterSecs).toBe(60);
    k.clock.advance(61);
    for (let i = 0; i < 5; i++) await rejection(bad());
    expect((await rejection(bad())).extra.retryAfterSecs).toBe(120);
  });

  it('limits guesses at one username from many addresses, except from addresses it logged in from', async () => {
    const k = await authKit({ loginUserFailureLimit: 10 });
    const from = (address: string, password: string) =>
      k.auth.login({ auth_method: 'user_password', public_key: 'dev', client_name: 'c', provider_data: { username: 'dev', password } }, { host: undefined, address });
    await from('home', 'dev-password');
    for (let i = 0; i < 10; i++) await rejection(from(`bot-${i}`, 'guess-guess'));
    expect((await rejection(from('bot-new', 'dev-password'))).kind).toBe('rate_limited');
    await expect(from('home', 'dev-password')).resolves.toHaveProperty('access_token');
  });

  it('refuses wrong credentials with 401 and locks the bucket after five failures', async () => {
    const k = await authKit();
    const bad = () =>
      k.auth.login({ auth_method: 'user_password', public_key: 'dev', client_name: 'c', provider_data: { username: 'dev', password: 'wrong-password' } });
    for (let i = 0; i < 5; i++) {
      const e = await rejection(bad());
      expect(e.kind).toBe('unauthenticated');
      expect(e.message).toContain('Invalid username or password');
    }
    const locked = await rejection(bad());
    expect(locked.kind).toBe('rate_limited');
    expect(locked.extra.retryAfterSecs).toBeGreaterThanOrEqual(1);
    // even the right password waits for the window: the bucket is locked
    expect((await rejection(k.login())).kind).toBe('rate_limited');
    k.clock.advance(61);
    await expect(k.login()).resolves.toHaveProperty('access_token');
  });

  it('refuses oversized login fields with 400 before checking anything', async () => {
    const k = await authKit();
    const e = await rejection(k.auth.login({ auth_method: 'user_password', public_key: 'p'.repeat(257), client_name: 'c', provider_data: { username: 'dev', password: 'dev-password' } }));
    expect(e.kind).toBe('bad_request');
    expect(e.message).toContain('public_key');
  });

  it('names an unsupported method and malformed provider data', async () => {
    const k = await authKit();
    const e1 = await rejection(k.auth.login({ auth_method: 'wallet', public_key: 'x', client_name: 'c', provider_data: {} }));
    expect(e1.message).toContain('Unsupported authentication method: wallet');
    const e2 = await rejection(k.auth.login({ auth_method: 'user_password', public_key: 'y', client_name: 'c', provider_data: { password: 'x' } }));
    expect(e2.message).toContain('missing field `username`');
  });
});

describe('refresh', () => {
  it('is refused while the access token is still valid, without an X-Auth-Error reason', async () => {
    const k = await authKit();
    const pair = await k.login();
    const e = await rejection(k.auth.refresh(pair.access_token, pair.refresh_token, { host: undefined }));
    expect(e.message).toBe('Access token still valid');
    expect(e.extra.authReason).toBeUndefined();
  });

  it('rotates an expired pair once; a replay is token_reuse and revokes the outstanding root tokens', async () => {
    const k = await authKit();
    const pair = await k.login();
    k.clock.advance(3600 + 61);
    const next = await k.auth.refresh(pair.access_token, pair.refresh_token, { host: undefined });
    expect(next.access_token).not.toBe(pair.access_token);
    await expect(k.principalOf(next.access_token)).resolves.toMatchObject({ keyType: 'root' });
    const replay = await rejection(k.auth.refresh(pair.access_token, pair.refresh_token, { host: undefined }));
    expect(replay.extra.authReason).toBe('token_reuse');
    const revoked = await rejection(k.principalOf(next.access_token));
    expect(revoked.extra.authReason).toBe('token_revoked');
    // the root key itself survives: its owner logs in again
    const fresh = await k.login();
    await expect(k.principalOf(fresh.access_token)).resolves.toMatchObject({ keyType: 'root' });
  });

  it('revokes a client key whose refresh token is replayed', async () => {
    const k = await authKit();
    const admin = await k.principalOf((await k.login()).access_token);
    const { pair, clientId } = await k.keys.createClientKey(admin, { permissions: ['application:list'] });
    k.clock.advance(15 * 60 + 61);
    await k.auth.refresh(pair.access_token, pair.refresh_token, { host: undefined });
    await rejection(k.auth.refresh(pair.access_token, pair.refresh_token, { host: undefined }));
    const key = await k.keyStore.get(clientId);
    expect(key?.revokedAt).not.toBeNull();
  });

  it('refuses tokens of different subjects', async () => {
    const k = await authKit();
    const a = await k.login();
    const admin = await k.principalOf(a.access_token);
    const { pair } = await k.keys.createClientKey(admin, { permissions: ['application:list'] });
    k.clock.advance(3600 + 61);
    const e = await rejection(k.auth.refresh(a.access_token, pair.refresh_token, { host: undefined }));
    expect(e.message).toContain('same subject');
  });
});

describe('client keys under their root key (issue #17 finding 4)', () => {
  it('stop working when the root key is revoked: 401 token_revoked on the next use, refresh and logout refused', async () => {
    const k = await authKit();
    await k.keys.createRootKey({ public_key: 'ops', auth_method: 'user_password', provider_data: { username: 'ops', password: 'ops-password' } });
    const opsLogin = await k.auth.login({ auth_method: 'user_password', public_key: 'ops', client_name: 'c', provider_data: { username: 'ops', password: 'ops-password' } });
    const ops = await k.principalOf(opsLogin.access_token);
    const { pair, clientId } = await k.keys.createClientKey(ops, { permissions: ['application:list'] });
    await expect(k.principalOf(pair.access_token)).resolves.toMatchObject({ keyId: clientId });
    expect(await k.keys.deleteRootKey(ops, ops.keyId)).toMatchObject({ key_id: ops.keyId });
    const e = await rejection(k.principalOf(pair.access_token));
    expect(e.kind).toBe('unauthenticated');
    expect(e.extra.authReason).toBe('token_revoked');
    expect((await rejection(k.auth.logout(pair.refresh_token))).kind).toBe('unauthenticated');
    k.clock.advance(15 * 60 + 61);
    expect((await rejection(k.auth.refresh(pair.access_token, pair.refresh_token, { host: undefined }))).kind).toBe('unauthenticated');
    expect((await k.keys.listClientKeys()).find((c) => c.id === clientId)?.isValid).toBe(false);
  });

  it('never outlive their root key, and hold only what it still holds', async () => {
    const k = await authKit();
    const admin = await k.principalOf((await k.login()).access_token);
    const root = (await k.keyStore.get(admin.keyId))!;
    const rootExpiry = Math.floor(k.clock.now() / 1000) + 600;
    await k.keyStore.put({ ...root, expiresAt: rootExpiry });
    const { pair, clientId } = await k.keys.createClientKey(admin, { permissions: ['application:list', 'blob:list'], ttl_secs: 86_400 });
    expect((await k.keyStore.get(clientId))!.expiresAt).toBe(rootExpiry);
    // narrowing the root narrows the client at once
    await k.keyStore.put({ ...root, expiresAt: rootExpiry, permissions: ['admin'] });
    await k.keys.createRootKey({ public_key: 'ops', auth_method: 'user_password', provider_data: { username: 'ops', password: 'ops-password' } });
    await k.keyStore.put({ ...(await k.keyStore.get(admin.keyId))!, permissions: ['application:list'] });
    expect((await k.principalOf(pair.access_token)).permissions).toEqual(['application:list']);
  });

  it('cannot mint client keys or root keys themselves', async () => {
    const k = await authKit();
    const admin = await k.principalOf((await k.login()).access_token);
    const { pair } = await k.keys.createClientKey(admin, { permissions: ['admin'] });
    const client = await k.principalOf(pair.access_token);
    expect((await rejection(k.keys.createClientKey(client, { permissions: ['application:list'] }))).kind).toBe('forbidden');
    const made = k.keys.createRootKey({ public_key: 'x', auth_method: 'user_password', provider_data: { username: 'x', password: 'x-password' } }, client);
    expect((await rejection(made)).kind).toBe('forbidden');
  });
});

describe('logout', () => {
  it('retires the refresh token: a later refresh or second logout is 401 without family revocation', async () => {
    const k = await authKit();
    const pair = await k.login();
    await k.auth.logout(pair.refresh_token);
    expect((await rejection(k.auth.logout(pair.refresh_token))).kind).toBe('unauthenticated');
    k.clock.advance(3600 + 61);
    const e = await rejection(k.auth.refresh(pair.access_token, pair.refresh_token, { host: undefined }));
    expect(e.extra.authReason).toBeUndefined();
    const other = await k.login();
    await expect(k.principalOf(other.access_token)).resolves.toBeTruthy();
  });

  it('refuses an access token in the refresh slot', async () => {
    const k = await authKit();
    const pair = await k.login();
    expect((await rejection(k.auth.logout(pair.access_token))).kind).toBe('unauthenticated');
  });
});

describe('authenticate and validate', () => {
  it('answers token_expired after expiry plus leeway', async () => {
    const k = await authKit();
    const pair = await k.login();
    k.clock.advance(3600 + 30);
    await expect(k.principalOf(pair.access_token)).resolves.toBeTruthy();
    k.clock.advance(31);
    expect((await rejection(k.principalOf(pair.access_token))).extra.authReason).toBe('token_expired');
    expect((await rejection(k.auth.validate(pair.access_token, { host: undefined }))).extra.authReason).toBe('token_expired');
  });

  it('binds a token to the host named by its node_url', async () => {
    const k = await authKit();
    const pair = await loginBoundTo(k, 'http://node.example:2528');
    await expect(k.auth.authenticate(pair.access_token, { host: 'node.example:2528' })).resolves.toBeTruthy();
    await expect(k.auth.authenticate(pair.access_token, { host: 'node.example' })).resolves.toBeTruthy();
    expect((await rejection(k.auth.validate(pair.access_token, { host: 'other.example:2528' }))).extra.authReason).toBe('invalid_node');
  });

  it('answers a revoked key with 401 token_revoked everywhere (auth spec: an invalid token is 401)', async () => {
    const k = await authKit();
    const admin = await k.principalOf((await k.login()).access_token);
    const { pair, clientId } = await k.keys.createClientKey(admin, { permissions: ['application:list'] });
    await k.keys.revoke(admin, clientId);
    for (const e of [await rejection(k.principalOf(pair.access_token)), await rejection(k.auth.validate(pair.access_token, { host: undefined }))]) {
      expect(e.kind).toBe('unauthenticated');
      expect(e.extra.authReason).toBe('token_revoked');
    }
  });

  it('honours X-Forwarded-Host only through the configured node hosts', async () => {
    const k = await authKit({ nodeHosts: ['node.example:2528'] });
    const pair = await loginBoundTo(k, 'http://node.example:2528');
    // the bound host is one of the node's names, whatever the request claims to be addressed to
    await expect(k.auth.authenticate(pair.access_token, { host: 'attacker.example' })).resolves.toBeTruthy();
    const other = await loginBoundTo(k, 'http://other.example:2528');
    // a token bound to another node fails even when the request names that node's host
    expect((await rejection(k.auth.authenticate(other.access_token, { host: 'other.example:2528' }))).extra.authReason).toBe('invalid_token');
  });

  it('intersects the token claims with the live key permissions', async () => {
    const k = await authKit();
    const admin = await k.principalOf((await k.login()).access_token);
    const { pair, clientId } = await k.keys.createClientKey(admin, { permissions: ['application:list', 'blob:list'] });
    await k.keys.updatePermissions(admin, clientId, [], ['blob:list']);
    expect((await k.principalOf(pair.access_token)).permissions).toEqual(['application:list']);
    expect(subOf(pair.access_token)).toBe(clientId);
  });
});
