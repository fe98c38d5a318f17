/**
 * Large bodies of method calls counted before they are read (body-admission.ts, issue #23 §4):
 * `POST /jsonrpc` and `POST /admin-api/contexts/{id}/query` answer 503 with `Retry-After` and
 * `Connection: close` when the body would pass the node's pending bytes while something is pending,
 * and run as usual when nothing is.
 */
import pino from 'pino';
import { beforeAll, expect, it } from 'vitest';
import type { Principal } from '../auth/service.ts';
import { buildApp, type App } from '../http/app.ts';
import { CallAdmission } from './admission.ts';
import { registerContextRoutes } from './routes.ts';
import { registerJsonRpcRoute } from './rpc.ts';
import { world, type World } from './testkit.ts';

const owner: Principal = { keyId: 'k', keyType: 'root', rootKeyId: 'k', permissions: ['admin'], binding: { contexts: [], groups: [], applications: [] } };
const BOUND = 256 * 1024;

let w: World;
let app: App;
let ctx: string;

beforeAll(async () => {
  w = await world([], { admission: new CallAdmission({ totalBytes: BOUND }) });
  app = await buildApp({
    logger: pino({ level: 'silent' }),
    routes: (a) => {
      a.addHook('onRequest', async (req) => {
        req.principal = owner;
      });
      registerContextRoutes(a, { ...w, admission: w.executor.admission });
      registerJsonRpcRoute(a, { calls: w.calls, admission: w.executor.admission });
    },
  });
  ctx = (await w.contexts.create({ groupId: w.namespaceId, initializationParams: new Uint8Array() })).contextId;
});

const value = 'v'.repeat(200 * 1024);
const post = (url: string, body: unknown) => app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });

it('refuses a large body with 503 before reading it while the pending bytes would pass the bound, and serves it otherwise', async () => {
  const routes: Array<[string, () => unknown]> = [
    ['/jsonrpc', () => ({ jsonrpc: '2.0', id: 1, method: 'execute', params: { contextId: ctx, method: 'get', argsJson: { key: value } } })],
    [`/admin-api/contexts/${ctx}/query`, () => ({ method: 'get', argsJson: { key: value } })],
  ];
  for (const [url, body] of routes) {
    // nothing pending: served whatever its size
    const free = await post(url, body());
    expect(free.statusCode).toBe(200);
    // another call holds 100 KiB of arguments: this body would pass the 256 KiB bound
    const pending = w.executor.admission.admit('other', 100 * 1024);
    try {
      const refused = await post(url, body());
      expect(refused.statusCode).toBe(503);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.headers.connection).toBe('close');
      expect(refused.json().error).toMatch(/bytes of call arguments and request bodies/);
    } finally {
      pending();
    }
    expect(w.executor.admission.pending()).toEqual({ calls: 0, bytes: 0 });
    expect((await post(url, body())).statusCode).toBe(200);
  }
});
