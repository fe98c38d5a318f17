/**
 * The node guard over a real app (fastify `inject`): a client's first request takes the path that
 * reads the store, the next ones the synchronous path (issue #14); both answer the same statuses and
 * `X-Auth-Error` reasons, and a revoked key is refused on the very next request — also on one
 * real keep-alive connection (what a per-connection memo of the last token must keep true).
 */
import { Agent, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { authKit } from './testkit.ts';
import { buildApp } from '../http/app.ts';
import { registerGuard } from './guard.ts';

async function guarded() {
  const k = await authKit();
  const app = await buildApp({
    logger: pino({ level: 'silent' }),
    routes: (a) => {
      registerGuard(a, k.auth);
      a.get('/admin-api/peers', async (req) => ({ count: 0, key: req.principal?.keyId }));
      a.get('/admin-api/applications', async (req) => ({ key: req.principal?.keyId }));
      a.get('/admin-api/health', async () => ({ data: { status: 'alive' } }));
      a.get('/admin-api/contexts', async () => ({ data: [] }));
      a.post('/admin-api/contexts', async () => ({ data: {} }));
    },
  });
  const get = async (url: string, token?: string, method: 'GET' | 'POST' = 'GET') => {
    const res = await app.inject({ method, url, headers: { host: '127.0.0.1', ...(token ? { authorization: `Bearer ${token}` } : {}) } });
    return { status: res.statusCode, reason: res.headers['x-auth-error'], body: res.json() as Record<string, unknown> };
  };
  return { k, app, get };
}

describe('the guard', () => {
  it('answers the same on a first request and on the cached ones after it', async () => {
    const { k, get } = await guarded();
    const admin = (await k.login()).access_token;
    const first = await get('/admin-api/peers', admin);
    expect(first).toMatchObject({ status: 200, reason: undefined, body: { count: 0 } });
    expect(k.auth.authenticateCached(admin, { host: '127.0.0.1' })).toBeDefined(); // the next request takes the synchronous path
    expect(await get('/admin-api/peers', admin)).toEqual(first);

    const { pair } = await k.keys.createClientKey(await k.principalOf(admin), { permissions: ['application:list'] });
    const denied = await get('/admin-api/peers', pair.access_token);
    expect(denied).toMatchObject({ status: 403, reason: 'permission_denied' });
    expect(await get('/admin-api/peers', pair.access_token)).toEqual(denied);
    const allowed = await get('/admin-api/applications', pair.access_token);
    expect(allowed.status).toBe(200);
    expect(await get('/admin-api/applications', pair.access_token)).toEqual(allowed);
  });

  it('decides each method of a path on its own (the remembered decisions are per method and path)', async () => {
    const { k, get } = await guarded();
    const admin = await k.principalOf((await k.login()).access_token);
    const { pair } = await k.keys.createClientKey(admin, { permissions: ['context:list'] });
    for (let i = 0; i < 2; i++) {
      expect((await get('/admin-api/contexts', pair.access_token)).status).toBe(200);
      expect(await get('/admin-api/contexts', pair.access_token, 'POST')).toMatchObject({ status: 403, reason: 'permission_denied' });
    }
  });

  it('answers a missing or bad token, and leaves public routes alone', async () => {
    const { get } = await guarded();
    for (let i = 0; i < 2; i++) {
      expect(await get('/admin-api/peers')).toMatchObject({ status: 401, reason: 'missing_token' });
      expect(await get('/admin-api/peers', 'not-a-jwt')).toMatchObject({ status: 401, reason: 'invalid_token' });
      expect(await get('/admin-api/health')).toMatchObject({ status: 200, reason: undefined });
    }
  });

  it('refuses a revoked client key on the very next request', async () => {
    const { k, get } = await guarded();
    const admin = await k.principalOf((await k.login()).access_token);
    const { pair, clientId } = await k.keys.createClientKey(admin, { permissions: ['application:list'] });
    expect((await get('/admin-api/applications', pair.access_token)).body).toEqual({ key: clientId });
    expect((await get('/admin-api/applications', pair.access_token)).status).toBe(200);
    await k.keys.revoke(admin, clientId);
    expect(await get('/admin-api/applications', pair.access_token)).toMatchObject({ status: 401, reason: 'token_revoked' });
  });

  it('gives the fast lanes a sender only when the hook would admit it at once, and never a revoked key', async () => {
    const { k, app, get } = await guarded();
    const gate = app.fastLanes.gate!;
    const raw = (token: string) => ({ method: 'GET', headers: { host: '127.0.0.1', authorization: `Bearer ${token}` }, socket: { remoteAddress: '127.0.0.1' } }) as unknown as IncomingMessage;
    const admin = await k.principalOf((await k.login()).access_token);
    const { pair, clientId } = await k.keys.createClientKey(admin, { permissions: ['application:list'] });
    expect(gate(raw('not-a-token'), '/admin-api/applications')).toBeUndefined();
    expect(gate(raw(pair.access_token), '/admin-api/health')).toBeUndefined(); // a public route: nobody to admit
    await get('/admin-api/applications', pair.access_token); // verified once: cached
    expect(gate(raw(pair.access_token), '/admin-api/applications')).toMatchObject({ keyId: clientId });
    expect(() => gate(raw(pair.access_token), '/admin-api/peers')).toThrow(/permission/);
    await k.keys.revoke(admin, clientId);
    expect(() => gate(raw(pair.access_token), '/admin-api/applications')).toThrow();
  });

  it('refuses an expired token with token_expired after it was cached', async () => {
    const { k, get } = await guarded();
    const token = (await k.login()).access_token;
    expect((await get('/admin-api/peers', token)).status).toBe(200);
    k.clock.advance(3600 + 61);
    expect(await get('/admin-api/peers', token)).toMatchObject({ status: 401, reason: 'token_expired' });
  });

  it('on one keep-alive connection: refuses a revoked key or an expired token on the next request, and tells tokens apart', async () => {
    const { k, app } = await guarded();
    await app.listen({ port: 0, host: '127.0.0.1' });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const ports = new Set<number>();
    const send = (url: string, token: string) =>
      new Promise<{ status: number; reason: unknown; body: Record<string, unknown> }>((resolve, reject) => {
        const req = request({ agent, host: '127.0.0.1', port: (app.server.address() as AddressInfo).port, path: url, headers: { authorization: `Bearer ${token}` } }, (res) => {
          ports.add(res.socket.localPort!);
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, reason: res.headers['x-auth-error'], body: JSON.parse(text) as Record<string, unknown> }));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      const adminToken = (await k.login()).access_token;
      const admin = await k.principalOf(adminToken);
      const { pair, clientId } = await k.keys.createClientKey(admin, { permissions: ['application:list'] });
      for (let i = 0; i < 3; i++) {
        // two tokens in turn on the same connection: each request answers for its own token
        expect((await send('/admin-api/applications', pair.access_token)).body).toEqual({ key: clientId });
        expect(await send('/admin-api/peers', pair.access_token)).toMatchObject({ status: 403, reason: 'permission_denied' });
        expect((await send('/admin-api/peers', adminToken)).body).toMatchObject({ key: admin.keyId });
      }
      expect((await send('/admin-api/applications', pair.access_token)).status).toBe(200);
      await k.keys.revoke(admin, clientId);
      expect(await send('/admin-api/applications', pair.access_token)).toMatchObject({ status: 401, reason: 'token_revoked' });
      expect(await send('/admin-api/peers', 'not-a-jwt')).toMatchObject({ status: 401, reason: 'invalid_token' });
      expect((await send('/admin-api/peers', adminToken)).status).toBe(200);
      k.clock.advance(3600 + 61);
      expect(await send('/admin-api/peers', adminToken)).toMatchObject({ status: 401, reason: 'token_expired' });
      expect(ports.size).toBe(1); // every request above went over the one connection
    } finally {
      agent.destroy();
      await app.close();
    }
  });
});
