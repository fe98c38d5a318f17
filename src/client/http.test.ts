import { describe, expect, it, vi } from 'vitest';
import { AuthRevokedError, DecodeError, HttpError, NetworkError, TimeoutError } from './errors.ts';
import { empty, fakeFetch, fakeJwt, hangingFetch, json } from './fake-fetch.ts';
import { HttpClient, type HttpClientOptions } from './http.ts';
import { MemoryTokenStore, type Tokens } from './token-store.ts';

const BASE = 'http://node.test:2428';
const OLD: Tokens = { accessToken: 'old-access', refreshToken: 'old-refresh' };
const NEW_ACCESS = fakeJwt({ sub: 'root', exp: 2_000_000_000 });

function client(fetch: typeof globalThis.fetch, extra: Partial<HttpClientOptions> = {}) {
  const store = new MemoryTokenStore(OLD);
  return { store, http: new HttpClient({ baseUrl: BASE, tokenStore: store, fetch, ...extra }) };
}

const bearer = (token: string) => (req: { headers: Headers }) => req.headers.get('authorization') === `Bearer ${token}`;

describe('HttpClient basics', () => {
  it('joins the base URL (keeping a path prefix) and encodes the query', async () => {
    const http = new HttpClient({ baseUrl: 'http://h:1/prefix/', fetch: fakeFetch().fetch });
    expect(http.url('/admin-api/health', { a: 'x y', skip: undefined, n: 3 })).toBe(
      'http://h:1/prefix/admin-api/health?a=x+y&n=3',
    );
  });

  it('sends the stored access token as a bearer header and JSON bodies with a content type', async () => {
    const fake = fakeFetch({ 'POST /x': () => json({ data: { ok: true } }) });
    const { http } = client(fake.fetch);
    await expect(http.data('/x', { method: 'POST', body: { big: 2n ** 64n - 1n } })).resolves.toEqual({ ok: true });
    const [req] = fake.requests;
    expect(req.headers.get('authorization')).toBe('Bearer old-access');
    expect(req.headers.get('content-type')).toBe('application/json');
    expect(req.bodyText).toBe('{"big":18446744073709551615}');
  });

  it('sends no bearer with auth: false and a given one with auth: <token>', async () => {
    const fake = fakeFetch({ 'GET /x': () => json({}) });
    const { http } = client(fake.fetch);
    await http.json('/x', { auth: false });
    await http.json('/x', { auth: 'explicit' });
    expect(fake.requests[0].headers.has('authorization')).toBe(false);
    expect(fake.requests[1].headers.get('authorization')).toBe('Bearer explicit');
  });

  it('unwraps data envelopes and keeps u64 values exact', async () => {
    const fake = fakeFetch({ 'GET /n': () => json('{"data":{"nonce":18446744073709551615,"n":5}}') });
    const { http } = client(fake.fetch);
    await expect(http.data('/n')).resolves.toEqual({ nonce: 18446744073709551615n, n: 5 });
    await expect(http.json('/n')).resolves.toEqual({ data: { nonce: 18446744073709551615n, n: 5 } });
  });

  it('rejects a missing or null envelope with DecodeError unless nullable', async () => {
    const fake = fakeFetch({
      'GET /flat': () => json({ count: 1 }),
      'GET /null': () => json({ data: null, error: 'nope' }),
      'GET /bad': () => json('not json'),
      'GET /empty': () => new Response(null, { status: 200 }),
    });
    const { http } = client(fake.fetch);
    await expect(http.data('/flat')).rejects.toBeInstanceOf(DecodeError);
    await expect(http.data('/null')).rejects.toThrow(/error: nope/);
    await expect(http.data('/null', { nullable: true })).resolves.toBeNull();
    await expect(http.json('/bad')).rejects.toBeInstanceOf(DecodeError);
    await expect(http.json('/empty')).resolves.toBeUndefined();
  });

  it('maps non-2xx answers to HttpError with status, body, error text and x-auth-error', async () => {
    const fake = fakeFetch({
      'DELETE /admin/keys/k': () => json({ data: null, error: 'Root key not found' }, 404),
      'GET /admin-api/x': () => empty(403, { 'x-auth-error': 'permission_denied' }),
      'GET /text': () => new Response('Failed to deserialize the JSON body', { status: 422 }),
    });
    const { http } = client(fake.fetch);
    const err = await http.send('/admin/keys/k', { method: 'DELETE' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpError);
    expect(err).toMatchObject({
      status: 404,
      method: 'DELETE',
      url: `${BASE}/admin/keys/k`,
      body: { data: null, error: 'Root key not found' },
      authError: null,
      errorText: 'Root key not found',
    });
    expect((err as HttpError).message).toContain('Root key not found');
    const denied = (await http.send('/admin-api/x').catch((e: unknown) => e)) as HttpError;
    expect(denied.authError).toBe('permission_denied');
    expect(denied.bodyText).toBe('');
    expect(denied.message).toContain('permission_denied');
    const text = (await http.send('/text').catch((e: unknown) => e)) as HttpError;
    expect(text.body).toBeUndefined();
    expect(text.message).toContain('Failed to deserialize');
  });

  it('raw() returns non-2xx answers instead of throwing', async () => {
    const fake = fakeFetch({ 'HEAD /v': () => empty(401, { 'x-auth-error': 'token_expired' }) });
    const { http } = client(fake.fetch);
    const res = await http.head('/v');
    expect(res.status).toBe(401);
    expect(res.headers.get('x-auth-error')).toBe('token_expired');
    expect(fake.calls('POST /auth/refresh')).toHaveLength(0);
  });
});

describe('HttpClient deadlines and failures', () => {
  it('throws TimeoutError when the deadline passes', async () => {
    const { http } = client(hangingFetch(), { timeoutMs: 20 });
    const err = await http.send('/slow').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({ timeoutMs: 20, method: 'GET', url: `${BASE}/slow` });
  });

  it('a per-call timeoutMs overrides the default', async () => {
    const { http } = client(hangingFetch(), { timeoutMs: 60_000 });
    await expect(http.send('/slow', { timeoutMs: 10 })).rejects.toBeInstanceOf(TimeoutError);
  });

  it("rejects with the caller's abort reason when the caller's signal aborts", async () => {
    const { http } = client(hangingFetch());
    const controller = new AbortController();
    const pending = http.send('/slow', { signal: controller.signal });
    controller.abort(new Error('user gave up'));
    await expect(pending).rejects.toThrow('user gave up');
    const already = AbortSignal.abort();
    await expect(http.send('/slow', { signal: already })).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('maps a failed fetch to NetworkError', async () => {
    const failing = (() => Promise.reject(new TypeError('fetch failed'))) as typeof fetch;
    const { http } = client(failing);
    const err = await http.send('/x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as Error).message).toContain('fetch failed');
  });
});

describe('HttpClient session rules', () => {
  function expiringNode() {
    let refreshes = 0;
    const fake = fakeFetch({
      'GET /admin-api/contexts': async (req) => {
        if (bearer(NEW_ACCESS)(req)) return json({ data: { contexts: [] } });
        return empty(401, { 'x-auth-error': 'token_expired' });
      },
      'POST /auth/refresh': async () => {
        refreshes++;
        await new Promise((r) => setTimeout(r, 10));
        return json({ data: { access_token: NEW_ACCESS, refresh_token: 'new-refresh', error: null }, error: null });
      },
    });
    return { fake, refreshes: () => refreshes };
  }

  it('refreshes once for two concurrent expired calls and retries each once', async () => {
    const { fake, refreshes } = expiringNode();
    const { http, store } = client(fake.fetch);
    const [a, b] = await Promise.all([http.data('/admin-api/contexts'), http.data('/admin-api/contexts')]);
    expect(a).toEqual({ contexts: [] });
    expect(b).toEqual({ contexts: [] });
    expect(refreshes()).toBe(1);
    const [refresh] = fake.calls('POST /auth/refresh');
    expect(refresh.body).toEqual({ access_token: 'old-access', refresh_token: 'old-refresh' });
    expect(refresh.headers.has('authorization')).toBe(false);
    expect(fake.calls('GET /admin-api/contexts')).toHaveLength(4);
    expect(store.get()).toEqual({ accessToken: NEW_ACCESS, refreshToken: 'new-refresh', expiresAt: 2_000_000_000_000 });
  });

  it('renews a token about to expire before sending a streamed body, which could not be replayed', async () => {
    const seen: string[] = [];
    const fake = fakeFetch({
      'PUT /admin-api/blobs': async (req) => {
        seen.push(req.headers.get('authorization') ?? '');
        return json({ data: { blobId: 'b', size: 1 } });
      },
      'POST /auth/refresh': () => json({ data: { access_token: NEW_ACCESS, refresh_token: 'new-refresh', error: null }, error: null }),
    });
    const soon = { accessToken: fakeJwt({ sub: 'root', exp: Math.floor(Date.now() / 1000) + 30 }), refreshToken: 'r' };
    const http = new HttpClient({ baseUrl: BASE, tokenStore: new MemoryTokenStore(soon), fetch: fake.fetch });
    const body = () => new ReadableStream<Uint8Array>({ start: (c) => (c.enqueue(new Uint8Array([1])), c.close()) });
    await http.send('/admin-api/blobs', { method: 'PUT', rawBody: body() });
    expect(seen).toEqual([`Bearer ${NEW_ACCESS}`]);
    expect(fake.calls('POST /auth/refresh')).toHaveLength(1);
    // A token with time left is sent as it is.
    await http.send('/admin-api/blobs', { method: 'PUT', rawBody: body() });
    expect(fake.calls('POST /auth/refresh')).toHaveLength(1);
  });

  it('adopts a pair another call already rotated instead of refreshing again', async () => {
    const { fake, refreshes } = expiringNode();
    const { http } = client(fake.fetch);
    fake.on('GET /late', async (req) => {
      if (bearer(NEW_ACCESS)(req)) return json({ data: 1 });
      await http.refreshTokens(); // another call rotates the pair while this one is in flight
      return empty(401, { 'x-auth-error': 'token_expired' });
    });
    await expect(http.data('/late')).resolves.toBe(1);
    expect(refreshes()).toBe(1);
    expect(fake.calls('GET /late').map((r) => r.headers.get('authorization'))).toEqual([
      'Bearer old-access',
      `Bearer ${NEW_ACCESS}`,
    ]);
  });

  it('retries only once: a second token_expired is thrown', async () => {
    const fake = fakeFetch({
      'GET /x': () => empty(401, { 'x-auth-error': 'token_expired' }),
      'POST /auth/refresh': () => json({ data: { access_token: NEW_ACCESS, refresh_token: 'r2' } }),
    });
    const { http } = client(fake.fetch);
    const err = (await http.send('/x').catch((e: unknown) => e)) as HttpError;
    expect(err.status).toBe(401);
    expect(err.authError).toBe('token_expired');
    expect(fake.calls('GET /x')).toHaveLength(2);
    expect(fake.calls('POST /auth/refresh')).toHaveLength(1);
  });

  it('does not refresh on a 401 without token_expired, nor without a stored session', async () => {
    const fake = fakeFetch({ 'GET /x': () => empty(401) });
    const { http } = client(fake.fetch);
    await expect(http.send('/x')).rejects.toMatchObject({ status: 401 });
    fake.on('GET /x', () => empty(401, { 'x-auth-error': 'token_expired' }));
    await expect(http.send('/x', { auth: 'explicit' })).rejects.toMatchObject({ status: 401 });
    expect(fake.calls('POST /auth/refresh')).toHaveLength(0);
  });

  it('throws the original 401 and keeps the tokens when the refresh fails', async () => {
    const fake = fakeFetch({
      'GET /x': () => empty(401, { 'x-auth-error': 'token_expired' }),
      'POST /auth/refresh': () => json({ data: null, error: 'Invalid refresh token: expired' }, 401),
    });
    const { http, store } = client(fake.fetch);
    const err = (await http.send('/x').catch((e: unknown) => e)) as HttpError;
    expect(err).toBeInstanceOf(HttpError);
    expect(err.url).toBe(`${BASE}/x`);
    expect(err.authError).toBe('token_expired');
    expect((err.cause as HttpError).errorText).toBe('Invalid refresh token: expired');
    expect(store.get()).toEqual(OLD);
  });

  it('treats token_reuse on refresh as terminal: clears the store and notifies once', async () => {
    const onAuthRevoked = vi.fn();
    const fake = fakeFetch({
      'GET /x': () => empty(401, { 'x-auth-error': 'token_expired' }),
      'POST /auth/refresh': () =>
        json({ data: null, error: 'Refresh token reuse detected' }, 401, { 'x-auth-error': 'token_reuse' }),
    });
    const { http, store } = client(fake.fetch, { onAuthRevoked });
    const results = await Promise.allSettled([http.send('/x'), http.send('/x')]);
    for (const r of results) {
      expect(r.status).toBe('rejected');
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(AuthRevokedError);
      expect((r as PromiseRejectedResult).reason.reason).toBe('token_reuse');
    }
    expect(fake.calls('POST /auth/refresh')).toHaveLength(1);
    expect(store.get()).toBeNull();
    expect(onAuthRevoked).toHaveBeenCalledTimes(1);
    expect(fake.calls('GET /x')).toHaveLength(2);
  });

  it('treats a 403 token_revoked as terminal without retrying', async () => {
    const onAuthRevoked = vi.fn();
    const fake = fakeFetch({ 'GET /x': () => empty(403, { 'x-auth-error': 'token_revoked' }) });
    const { http, store } = client(fake.fetch, { onAuthRevoked });
    const err = await http.send('/x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthRevokedError);
    expect(err).toBeInstanceOf(HttpError);
    expect(err).toMatchObject({ status: 403, reason: 'token_revoked' });
    expect(store.get()).toBeNull();
    expect(onAuthRevoked).toHaveBeenCalledWith(err);
    expect(fake.requests).toHaveLength(1);
  });

  it('refreshTokens() forces a single-flight refresh and stores both tokens', async () => {
    const { fake } = expiringNode();
    const { http, store } = client(fake.fetch);
    const [a, b] = await Promise.all([http.refreshTokens(), http.refreshTokens()]);
    expect(a).toBe(b);
    expect(fake.calls('POST /auth/refresh')).toHaveLength(1);
    expect(store.get()?.refreshToken).toBe('new-refresh');
    await store.clear();
    await expect(http.refreshTokens()).rejects.toThrow(/no refresh token/);
  });

  it('the deadline covers the wait for a refresh', async () => {
    const fake = fakeFetch({
      'GET /x': () => empty(401, { 'x-auth-error': 'token_expired' }),
      'POST /auth/refresh': () => new Promise<Response>(() => {}),
    });
    const { http } = client(fake.fetch, { timeoutMs: 1_000 });
    await expect(http.send('/x', { timeoutMs: 20 })).rejects.toBeInstanceOf(TimeoutError);
  });
});

describe('HttpClient body modes and session edge cases', () => {
  it('bytes() returns the binary body and stream() the unread response', async () => {
    const fake = fakeFetch({
      'GET /blob': () => new Response(new Uint8Array([0, 1, 255])),
      'GET /sse': () => new Response('data: 1\n\n', { headers: { 'content-type': 'text/event-stream' } }),
    });
    const { http } = client(fake.fetch);
    await expect(http.bytes('/blob')).resolves.toEqual(new Uint8Array([0, 1, 255]));
    const res = await http.stream('/sse');
    await expect(res.text()).resolves.toBe('data: 1\n\n');
  });

  it('does not clear a store that already holds a different pair', async () => {
    const onAuthRevoked = vi.fn();
    const fake = fakeFetch({ 'GET /x': () => empty(403, { 'x-auth-error': 'token_revoked' }) });
    const { http, store } = client(fake.fetch, { onAuthRevoked });
    await expect(http.send('/x', { auth: true, headers: {} })).rejects.toBeInstanceOf(AuthRevokedError);
    const fresh = { accessToken: 'fresh', refreshToken: 'fresh-r' };
    store.set(fresh);
    fake.on('GET /x', (req) => {
      store.set({ accessToken: 'newer', refreshToken: 'n' }); // a login lands while the call is in flight
      return bearer('fresh')(req) ? empty(403, { 'x-auth-error': 'token_revoked' }) : json({});
    });
    await expect(http.send('/x')).rejects.toBeInstanceOf(AuthRevokedError);
    expect(store.get()?.accessToken).toBe('newer');
    expect(onAuthRevoked).toHaveBeenCalledTimes(1);
  });

  it('a throwing onAuthRevoked does not mask AuthRevokedError', async () => {
    const fake = fakeFetch({ 'GET /x': () => empty(401, { 'x-auth-error': 'token_reuse' }) });
    const { http } = client(fake.fetch, {
      onAuthRevoked: () => {
        throw new Error('listener bug');
      },
    });
    await expect(http.send('/x')).rejects.toMatchObject({ name: 'AuthRevokedError', reason: 'token_reuse' });
  });

  it('a refresh that cannot reach the node surfaces as the original 401', async () => {
    const fake = fakeFetch({ 'GET /x': () => empty(401, { 'x-auth-error': 'token_expired' }) });
    fake.on('POST /auth/refresh', () => Promise.reject(new TypeError('fetch failed')));
    const { http, store } = client(fake.fetch);
    const err = (await http.send('/x').catch((e: unknown) => e)) as HttpError;
    expect(err).toBeInstanceOf(HttpError);
    expect(err.status).toBe(401);
    expect(err.cause).toBeInstanceOf(NetworkError);
    expect(store.get()).toEqual(OLD);
  });
});
