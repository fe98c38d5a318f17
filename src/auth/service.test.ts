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
    const e = await rejection(k.auth.refresh(pair.access_token, pair.refresh_token, undefined));
    expect(e.message).toBe('Access token still valid');
    expect(e.extra.authReason).toBeUndefined();
  });

  it('rotates an expired pair once; a replay is token_reuse and revokes the outstanding root tokens', async () => {
    const k = await authKit();
    const pair = await k.login();
    k.clock.advance(3600 + 61);
    const next = await k.auth.refresh(pair.access_token, pair.refresh_token, undefined);
    expect(next.access_token).not.toBe(pair.access_token);
    await expect(k.principalOf(next.access_token)).resolves.toMatchObject({ keyType: 'root' });
    const replay = await rejection(k.auth.refresh(pair.access_token, pair.refresh_token, undefined));
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
    await k.auth.refresh(pair.access_token, pair.refresh_token, undefined);
    await rejection(k.auth.refresh(pair.access_token, pair.refresh_token, undefined));
    const key = await k.keyStore.get(clientId);
    expect(key?.revokedAt).not.toBeNull();
  });

  it('refuses tokens of different subjects', async () => {
    const k = await authKit();
    const a = await k.login();
    const admin = await k.principalOf(a.access_token);
    const { pair } = await k.keys.createClientKey(admin, { permissions: ['application:list'] });
    k.clock.advance(3600 + 61);
    const e = await rejection(k.auth.refresh(a.access_token, pair.refresh_token, undefined));
    expect(e.message).toContain('same subject');
  });
});

describe('logout', () => {
  it('retires the refresh token: a later refresh or second logout is 401 without family revocation', async () => {
    const k = await authKit();
    const pair = await k.login();
    await k.auth.logout(pair.refresh_token);
    expect((await rejection(k.auth.logout(pair.refresh_token))).kind).toBe('unauthenticated');
    k.clock.advance(3600 + 61);
    const e = await rejection(k.auth.refresh(pair.access_token, pair.refresh_token, undefined));
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
    expect((await rejection(k.auth.validate(pair.access_token, undefined))).extra.authReason).toBe('token_expired');
  });

  it('binds a token to the host named by its node_url', async () => {
    const k = await authKit();
    const pair = await k.auth.login({
      auth_method: 'user_password',
      public_key: 'dev',
      client_name: 'http://node.example:2528',
      provider_data: { username: 'dev', password: 'dev-password' },
    });
    await expect(k.auth.authenticate(pair.access_token, 'node.example:2528')).resolves.toBeTruthy();
    await expect(k.auth.authenticate(pair.access_token, 'node.example')).resolves.toBeTruthy();
    expect((await rejection(k.auth.validate(pair.access_token, 'other.example:2528'))).extra.authReason).toBe('invalid_node');
  });

  it('reports a revoked key as token_revoked to the guard and invalid_token to validate', async () => {
    const k = await authKit();
    const admin = await k.principalOf((await k.login()).access_token);
    const { pair, clientId } = await k.keys.createClientKey(admin, { permissions: ['application:list'] });
    await k.keys.revoke(admin, clientId);
    expect((await rejection(k.principalOf(pair.access_token))).extra.authReason).toBe('token_revoked');
    expect((await rejection(k.auth.validate(pair.access_token, undefined))).extra.authReason).toBe('invalid_token');
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
