/**
 * The guard's synchronous path (`AuthService.authenticateCached`, issue #14) against the path that
 * reads the store (`authenticate`): wherever the cached path answers, it answers what `authenticate`
 * does (the same principal, or the same 401 with the same reason); a key write is seen from the very
 * next call; and whatever it cannot decide from the caches it leaves to `authenticate`.
 */
import { describe, expect, it } from 'vitest';
import { HearthError } from '../errors.ts';
import { authKit } from './testkit.ts';

type Kit = Awaited<ReturnType<typeof authKit>>;
type Outcome = { principal: unknown } | { error: { kind: string; message: string; reason: unknown } } | 'not cached';

const HOST = { host: '127.0.0.1' };

function outcome(run: () => unknown): Outcome {
  try {
    const p = run();
    return p === undefined ? 'not cached' : { principal: p };
  } catch (e) {
    if (!(e instanceof HearthError)) throw e;
    return { error: { kind: e.kind, message: e.message, reason: e.extra.authReason } };
  }
}

async function outcomeAsync(run: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { principal: await run() };
  } catch (e) {
    if (!(e instanceof HearthError)) throw e;
    return { error: { kind: e.kind, message: e.message, reason: e.extra.authReason } };
  }
}

/** The cached path's answer, then `authenticate`'s; the first must be 'not cached' or equal the second. */
async function both(k: Kit, token: string, origin = HOST): Promise<{ cached: Outcome; full: Outcome }> {
  const cached = outcome(() => k.auth.authenticateCached(token, origin));
  const full = await outcomeAsync(() => k.auth.authenticate(token, origin));
  if (cached !== 'not cached') expect(cached).toEqual(full);
  return { cached, full };
}

const errorOf = (o: Outcome) => (typeof o === 'object' && 'error' in o ? o.error : undefined);

describe('authenticateCached', () => {
  it('leaves a token it has not verified to authenticate, then answers the same principal without waiting', async () => {
    const k = await authKit();
    const pair = await k.login();
    const first = await both(k, pair.access_token);
    expect(first.cached).toBe('not cached');
    expect(first.full).toMatchObject({ principal: { keyType: 'root', permissions: ['admin'] } });
    const again = await both(k, pair.access_token);
    expect(again.cached).toEqual(first.full);
    // the answer is shared between requests, so nobody may change it
    const p = k.auth.authenticateCached(pair.access_token, HOST)!;
    expect(Object.isFrozen(p) && Object.isFrozen(p.permissions) && Object.isFrozen(p.binding.contexts)).toBe(true);
  });

  it('refuses a revoked client key on the very next call, as authenticate does', async () => {
    const k = await authKit();
    const admin = await k.principalOf((await k.login()).access_token);
    const { pair, clientId } = await k.keys.createClientKey(admin, { permissions: ['application:list'] });
    expect((await both(k, pair.access_token)).full).toMatchObject({ principal: { keyId: clientId, keyType: 'client' } });
    expect(k.auth.authenticateCached(pair.access_token, HOST)).toMatchObject({ keyId: clientId });
    await k.keys.revoke(admin, clientId);
    // no call of authenticate in between: the revocation itself updated what the cached path reads
    expect(errorOf(outcome(() => k.auth.authenticateCached(pair.access_token, HOST)))).toEqual({
      kind: 'unauthenticated',
      message: 'Key has been revoked',
      reason: 'token_revoked',
    });
    expect(errorOf((await both(k, pair.access_token)).full)?.reason).toBe('token_revoked');
  });

  it('refuses a client key whose root key was deleted, and narrows it with its root at once', async () => {
    const k = await authKit();
    const admin = await k.principalOf((await k.login()).access_token);
    const { pair } = await k.keys.createClientKey(admin, { permissions: ['application:list', 'blob:list'] });
    await both(k, pair.access_token);
    expect(k.auth.authenticateCached(pair.access_token, HOST)?.permissions).toEqual(['application:list', 'blob:list']);
    const root = (await k.keyStore.get(admin.keyId))!;
    await k.keyStore.put({ ...root, permissions: ['application:list'] });
    expect(k.auth.authenticateCached(pair.access_token, HOST)?.permissions).toEqual(['application:list']);
    expect((await both(k, pair.access_token)).cached).toMatchObject({ principal: { permissions: ['application:list'] } });
    await k.keys.createRootKey({ public_key: 'ops', auth_method: 'user_password', provider_data: { username: 'ops', password: 'ops-password' } });
    await k.keys.deleteRootKey(admin, admin.keyId);
    const { cached } = await both(k, pair.access_token);
    expect(errorOf(cached)).toMatchObject({ reason: 'token_revoked', message: 'The root key this client key was issued under has been revoked' });
  });

  it('refuses the tokens of an older generation (refresh-token reuse) and an expired key', async () => {
    const k = await authKit();
    const pair = await k.login();
    const admin = await k.principalOf(pair.access_token);
    const root = (await k.keyStore.get(admin.keyId))!;
    await k.keyStore.put({ ...root, generation: root.generation + 1 });
    expect(errorOf((await both(k, pair.access_token)).cached)).toEqual({ kind: 'unauthenticated', message: 'Token has been revoked', reason: 'token_revoked' });

    const other = await authKit();
    const p2 = await other.login();
    const key = (await other.keyStore.get((await other.principalOf(p2.access_token)).keyId))!;
    await other.keyStore.put({ ...key, expiresAt: Math.floor(other.clock.now() / 1000) + 10 });
    expect((await both(other, p2.access_token)).cached).toMatchObject({ principal: { keyId: key.id } });
    other.clock.advance(10);
    expect(errorOf((await both(other, p2.access_token)).cached)).toEqual({ kind: 'unauthenticated', message: 'Key has expired', reason: 'invalid_token' });
  });

  it('leaves an expired token to authenticate, which answers token_expired', async () => {
    const k = await authKit();
    const pair = await k.login();
    await both(k, pair.access_token);
    k.clock.advance(3600 + 30);
    expect((await both(k, pair.access_token)).cached).not.toBe('not cached'); // inside the leeway
    k.clock.advance(31);
    const { cached, full } = await both(k, pair.access_token);
    expect(cached).toBe('not cached');
    expect(errorOf(full)?.reason).toBe('token_expired');
  });

  it('answers a token bound to another host as authenticate does, and never takes a refresh token', async () => {
    const k = await authKit();
    const pair = await k.auth.login({ auth_method: 'user_password', public_key: 'dev', client_name: 'http://node.example:2528', provider_data: { username: 'dev', password: 'dev-password' } });
    await both(k, pair.access_token, { host: 'node.example:2528' });
    const elsewhere = await both(k, pair.access_token, { host: 'other.example:2528' });
    expect(errorOf(elsewhere.cached)).toEqual({ kind: 'unauthenticated', message: 'Token is bound to another node', reason: 'invalid_token' });
    await k.tokens.verify(pair.refresh_token, 'refresh');
    const refresh = await both(k, pair.refresh_token, { host: 'node.example:2528' });
    expect(refresh.cached).toBe('not cached');
    expect(errorOf(refresh.full)?.reason).toBe('invalid_token');
  });

  it('does not answer from a key record while a write of it is in flight', async () => {
    const k = await authKit();
    const admin = await k.principalOf((await k.login()).access_token);
    const { pair, clientId } = await k.keys.createClientKey(admin, { permissions: ['application:list'] });
    await both(k, pair.access_token);
    const record = (await k.keyStore.get(clientId))!;
    const writing = k.keyStore.put({ ...record, revokedAt: Math.floor(k.clock.now() / 1000) });
    expect(k.keyStore.cached(clientId)).toBeUndefined();
    expect(k.auth.authenticateCached(pair.access_token, HOST)).toBeUndefined();
    await writing;
    expect(errorOf(outcome(() => k.auth.authenticateCached(pair.access_token, HOST)))?.reason).toBe('token_revoked');
  });
});
