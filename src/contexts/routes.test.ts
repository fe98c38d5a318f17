/**
 * The contexts routes and `POST /jsonrpc` in-process (fastify inject) over the scripted runtime:
 * envelopes and flat shapes, "none" answers, bodies the reference ignores, the JSON-RPC envelope,
 * error objects and HTTP statuses, and u64-exact arguments.
 */
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../auth/service.ts';
import { buildApp, type App } from '../http/app.ts';
import { registerContextRoutes } from './routes.ts';
import { registerJsonRpcRoute } from './rpc.ts';
import { RpcMethodError } from './rpc-methods.ts';
import { world, type World } from './testkit.ts';
import { UNINITIALIZED_HASH } from './types.ts';

const owner: Principal = { keyId: 'k', keyType: 'root', rootKeyId: 'k', permissions: ['admin'], binding: { contexts: [], groups: [], applications: [] } };

let w: World;
let app: App;
let ctx: string;

beforeAll(async () => {
  w = await world();
  app = await buildApp({
    logger: pino({ level: 'silent' }),
    routes: (a) => {
      a.addHook('onRequest', async (req) => {
        req.principal = owner;
      });
      registerContextRoutes(a, w);
      registerJsonRpcRoute(a, {
        calls: w.calls,
        methods: {
          echo: async (c) => c.params,
          typed: async () => {
            throw new RpcMethodError('SliceTooLarge', { size: 2, max: 1 });
          },
          broken: async () => {
            throw new Error('secret detail');
          },
        },
      });
    },
  });
  const res = await app.inject({ method: 'POST', url: '/admin-api/contexts', payload: { groupId: w.namespaceId, applicationId: 'ab'.repeat(32), initializationParams: [], protocol: 'near' } });
  expect(res.statusCode).toBe(200);
  ctx = res.json().data.contextId;
});

const rpc = (payload: unknown) => app.inject({ method: 'POST', url: '/jsonrpc', headers: { 'content-type': 'application/json' }, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) });
const execute = (method: string, argsJson: unknown) => rpc({ jsonrpc: '2.0', id: 7, method: 'execute', params: { contextId: ctx, method, argsJson, executorPublicKey: 'ignored' } });

describe('contexts routes', () => {
  it('answers the reference shapes for reads', async () => {
    const get = (await app.inject({ url: `/admin-api/contexts/${ctx}` })).json();
    expect(get.data).toMatchObject({ id: ctx, applicationId: 'ab'.repeat(32), applicationVersion: '1.0.0' });
    expect(get.data.contextStateHash).not.toBe(UNINITIALIZED_HASH);
    expect(get.data.dagHeads[0]).toHaveLength(32);
    expect(get.data).not.toHaveProperty('name');
    const list = (await app.inject({ url: '/admin-api/contexts' })).json();
    expect(list.data.contexts).toEqual([{ ...get.data, groupId: w.namespaceId }]);
    expect((await app.inject({ url: '/admin-api/contexts?limit=0' })).json()).toEqual({ data: { contexts: [] } });
    expect((await app.inject({ url: `/admin-api/contexts/for-application/${'ab'.repeat(32)}` })).json().data.contexts).toHaveLength(1);
    const exec = (await app.inject({ url: `/admin-api/contexts/with-executors/for-application/${'ab'.repeat(32)}` })).json();
    expect(exec).toEqual({ contexts: [{ id: ctx, application_id: 'ab'.repeat(32), contextStateHash: get.data.contextStateHash, executors: [w.identity.publicKey] }] });
    expect((await app.inject({ url: `/admin-api/contexts/${ctx}/group` })).json()).toEqual({ data: w.namespaceId });
    expect((await app.inject({ url: `/admin-api/contexts/${'ee'.repeat(32)}/group` })).json()).toEqual({ data: null });
    expect((await app.inject({ url: `/admin-api/contexts/${ctx}/storage` })).json().data.sizeInBytes).toBeGreaterThan(0);
    expect((await app.inject({ url: `/admin-api/contexts/${ctx}/identities` })).json()).toEqual({ data: { identities: [w.identity.publicKey], identitiesOf: 'members' } });
    expect((await app.inject({ url: `/admin-api/contexts/${ctx}/identities-owned` })).json()).toEqual({ data: { identities: [w.identity.publicKey], identitiesOf: 'node' } });
    expect((await app.inject({ url: `/admin-api/contexts/${ctx}/intents` })).json().data).toMatchObject({ canAuthorOnBehalf: false, executorAccount: w.identity.accountId });
    expect((await app.inject({ url: '/admin-api/contexts/nope' })).statusCode).toBe(400);
    const missing = await app.inject({ url: `/admin-api/contexts/${'ee'.repeat(32)}` });
    expect([missing.statusCode, missing.json()]).toEqual([404, { error: 'Context not found' }]);
  });

  it('answers "none" routes with an empty 200 and ignores bodies the reference ignores', async () => {
    for (const url of ['/admin-api/contexts/sync', '/admin-api/contexts/sync/', `/admin-api/contexts/sync/${ctx}`]) {
      const r = await app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: '' });
      expect([url, r.statusCode, r.body]).toEqual([url, 200, '']);
    }
    const join = await app.inject({ method: 'POST', url: `/admin-api/contexts/${ctx}/join`, headers: { 'content-type': 'text/plain' }, payload: 'x' });
    expect(join.json()).toEqual({ data: { contextId: ctx, memberPublicKey: w.identity.publicKey } });
    const resync = await app.inject({ method: 'POST', url: `/admin-api/contexts/${ctx}/resync`, payload: { force: false } });
    expect(resync.json()).toEqual({ contextId: ctx, resyncStarted: true });
    expect((await app.inject({ method: 'POST', url: `/admin-api/contexts/${ctx}/resync`, payload: { force: 'yes' } })).statusCode).toBe(400);
    const app2 = await app.inject({ method: 'POST', url: `/admin-api/contexts/${ctx}/application`, payload: { applicationId: 'ab'.repeat(32), executorPublicKey: 'x' } });
    expect([app2.statusCode, app2.body]).toEqual([200, '']);
    expect((await app.inject({ method: 'POST', url: `/admin-api/contexts/${ctx}/application`, payload: { applicationId: 'cd'.repeat(32) } })).statusCode).toBe(400);
    const id = (await app.inject({ method: 'POST', url: '/admin-api/identity/context' })).json();
    expect(id.data.publicKey).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses bad create bodies with a 400 naming the field', async () => {
    const r = await app.inject({ method: 'POST', url: '/admin-api/contexts', payload: { initializationParams: [] } });
    expect([r.statusCode, r.json().error]).toEqual([400, 'Invalid request: body.groupId is required']);
    const bad = await app.inject({ method: 'POST', url: '/admin-api/contexts', payload: { groupId: w.namespaceId, initializationParams: [256] } });
    expect(bad.statusCode).toBe(400);
    expect((await app.inject({ method: 'POST', url: '/admin-api/contexts', payload: { groupId: 'x', initializationParams: [] } })).json().error).toMatch(/groupId/);
  });

  it('query: 200 with data.output for a view, 409 for a write, 400 FunctionCallError on failure', async () => {
    await execute('set', { key: 'q', value: 'v' });
    const ok = await app.inject({ method: 'POST', url: `/admin-api/contexts/${ctx}/query`, payload: { method: 'get', argsJson: { key: 'q' } } });
    expect([ok.statusCode, ok.json()]).toEqual([200, { data: { output: 'v' } }]);
    const write = await app.inject({ method: 'POST', url: `/admin-api/contexts/${ctx}/query`, payload: { method: 'set', argsJson: { key: 'q', value: 'w' } } });
    expect(write.statusCode).toBe(409);
    w.catalog.readOnly.add('panic');
    const fail = await app.inject({ method: 'POST', url: `/admin-api/contexts/${ctx}/query`, payload: { method: 'panic', argsJson: {} } });
    expect([fail.statusCode, fail.json()]).toEqual([400, { error: 'guest panicked: boom at src/lib.rs:1:1', type: 'FunctionCallError' }]);
  });
});

describe('POST /jsonrpc', () => {
  it('answers result.output and error objects with HTTP 200, echoing the id', async () => {
    expect((await execute('set', { key: 'k', value: 'hello' })).json()).toEqual({ jsonrpc: '2.0', id: 7, result: { output: null } });
    expect((await execute('get', { key: 'k' })).json()).toEqual({ jsonrpc: '2.0', id: 7, result: { output: 'hello' } });
    const err = await execute('nonexistent_method', {});
    expect([err.statusCode, err.json()]).toEqual([200, { jsonrpc: '2.0', id: 7, error: { type: 'FunctionCallError', data: 'method "nonexistent_method" not found' } }]);
    const nf = await rpc({ jsonrpc: '2.0', id: 'a', method: 'execute', params: { contextId: 'ee'.repeat(32), method: 'get', argsJson: {} } });
    expect(nf.json()).toEqual({ jsonrpc: '2.0', id: 'a', error: { type: 'ContextNotFound' } });
  });

  it('answers sync_status for a context with state, ContextNotFound otherwise', async () => {
    expect((await rpc({ jsonrpc: '2.0', id: 1, method: 'sync_status', params: { contextId: ctx } })).json().result).toEqual({
      contextId: ctx,
      isInitialized: true,
      syncState: { state: 'idle' },
      failureCount: 0,
    });
    expect((await rpc({ jsonrpc: '2.0', id: 1, method: 'sync_status', params: { contextId: 'ee'.repeat(32) } })).json().error).toEqual({ type: 'ContextNotFound' });
  });

  it('dispatches contributed methods; typed errors keep their shape, others are InternalError without detail', async () => {
    expect((await rpc({ jsonrpc: '2.0', id: null, method: 'echo', params: { n: 1 } })).json()).toEqual({ jsonrpc: '2.0', id: null, result: { n: 1 } });
    expect((await rpc({ jsonrpc: '2.0', id: 1, method: 'typed', params: {} })).json().error).toEqual({ type: 'SliceTooLarge', data: { size: 2, max: 1 } });
    const broken = await rpc({ jsonrpc: '2.0', id: 1, method: 'broken', params: {} });
    expect(broken.json().error).toEqual({ type: 'InternalError', data: {} });
    expect(broken.body).not.toContain('secret');
  });

  it('refuses envelopes that are not JSON-RPC 2.0 with a 400', async () => {
    for (const bad of ['{', { id: 1, method: 'execute', params: {} }, { jsonrpc: '2.0', method: 'execute', params: {} }, { jsonrpc: '2.0', id: 1, method: 'nope', params: {} }]) {
      const r = await rpc(bad);
      expect(r.statusCode).toBe(400);
      expect(typeof r.json().error).toBe('string');
    }
  });

  it('keeps u64 arguments and ids exact', async () => {
    const big = '18446744073709551615';
    const r = await rpc(`{"jsonrpc":"2.0","id":${big},"method":"execute","params":{"contextId":"${ctx}","method":"set","argsJson":{"key":"n","value":"x","extra":${big}}}}`);
    expect(r.body).toContain(`"id":${big}`);
    const input = new TextDecoder().decode(w.runtime.calls.at(-1)!.input);
    expect(input).toContain(`"extra":${big}`);
  });
});
