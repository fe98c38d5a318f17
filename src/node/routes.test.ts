/**
 * The route table mounts every domain's route groups from the domain list (routes.ts): the groups
 * MOUNT_ORDER names in its order, any other group (a new domain's) after them in list order, all
 * behind the node guard.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { authKit } from '../auth/testkit.ts';
import { buildApp } from '../http/app.ts';
import { Metrics } from '../http/metrics.ts';
import type { MountRoutes } from '../http/route-groups.ts';
import type { Domain } from './domain.ts';
import { MOUNT_ORDER, mountOrder, registerRoutes } from './routes.ts';

const noop: MountRoutes = () => undefined;
const groups = (...names: string[]) => Object.fromEntries(names.map((n) => [n, noop]));

describe('the route table', () => {
  it('mounts the groups it names in its order, then the others in the order of the domain list', () => {
    const domains: Domain[] = [
      { name: 'store' },
      { name: 'widgets', routes: groups('widgets') },
      { name: 'sync', routes: groups('sync') },
      { name: 'governance', routes: groups('signing-keys', 'governance') },
      { name: 'gadgets', routes: groups('gadgets') },
      { name: 'network', routes: groups('network') },
    ];
    const order = mountOrder(groups('dashboard', 'health'), domains).map(([name]) => name);
    expect(order).toEqual(['health', 'network', 'governance', 'signing-keys', 'dashboard', 'sync', 'widgets', 'gadgets']);
  });

  it('names each group once, and refuses two groups of one name', () => {
    expect(new Set(MOUNT_ORDER).size).toBe(MOUNT_ORDER.length);
    const domains: Domain[] = [{ name: 'blobs', routes: groups('blobs') }, { name: 'copy', routes: groups('blobs') }];
    expect(() => mountOrder({}, domains)).toThrow('two route groups are named "blobs" (domain copy)');
  });

  it('mounts a domain added to the list behind the guard, after the node’s own routes', async () => {
    const k = await authKit();
    const widgets: Domain = {
      name: 'widgets',
      routes: { widgets: (app) => app.get('/admin-api/applications', async () => ({ data: 'widgets' })) },
    };
    const app = await buildApp({
      logger: pino({ level: 'silent' }),
      routes: (a, catalogue) =>
        registerRoutes(a, {
          auth: k.auth,
          locateGroup: () => undefined,
          delegatedAccess: false,
          store: k.store,
          lifecycle: () => 'ready',
          peerCount: () => 0,
          metrics: new Metrics(),
          catalogue,
          domains: [{ name: 'store' }, widgets],
        }),
    });
    const get = (token?: string) =>
      app.inject({ method: 'GET', url: '/admin-api/applications', headers: { host: '127.0.0.1', ...(token ? { authorization: `Bearer ${token}` } : {}) } });
    expect((await get()).statusCode).toBe(401);
    const admin = (await k.login()).access_token;
    expect((await get(admin)).json()).toEqual({ data: 'widgets' });
    const doc = (await app.inject({ method: 'GET', url: '/admin-api/openapi.json' })).json() as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual([
      '/admin-api/health',
      '/admin-api/ready',
      '/admin-api/is-authed',
      '/admin-api/peers',
      '/metrics',
      '/admin-api/openapi.json',
      '/admin-api/applications',
    ]);
    await app.close();
  });
});
