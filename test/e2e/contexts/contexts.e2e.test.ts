/**
 * Contexts, JSON-RPC and query end to end: a real node, a real signed bundle of the AssemblyScript
 * kv-store test app (events, read-only views, app errors, panics) run by the WebAssembly host,
 * driven through the SDK over HTTP. Covers create (init ran), execute set/get, the error shapes,
 * atomicity of failing calls, query 200/409/403, StateMutation on the bus, identities, sync,
 * delete, and restart persistence.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, HttpError, MemoryTokenStore, RpcError, tokensFromPair, type Client } from '../../../src/client/index.ts';
import type { NodeEvent } from '../../../src/bus.ts';
import { makeBundle } from '../../helpers/bundles.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

const ALL_F = 'f'.repeat(64);
const X = '1'.repeat(64);
let node: TestNode;
let c: Client;
let appId: string;
let ns: string;
let ctx: string;
const events: NodeEvent[] = [];

async function connect(): Promise<void> {
  c = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  await c.auth.login({ username: node.adminUser, password: node.adminPassword });
  node.node.bus.subscribe((e) => events.push(e));
}

async function status(p: Promise<unknown>): Promise<number | string> {
  try {
    await p;
    return 200;
  } catch (e) {
    if (e instanceof HttpError) return e.status;
    if (e instanceof RpcError) return e.type;
    throw e;
  }
}

async function rpcError(p: Promise<unknown>): Promise<RpcError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof RpcError)) throw new Error(`expected an RpcError, got ${String(e)}`);
  return e;
}

const decode = (bytes: number[]) => new TextDecoder().decode(Uint8Array.from(bytes));

beforeAll(async () => {
  node = await startTestNode();
  await connect();
  const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.kv' });
  appId = (await c.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
  ns = (await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: appId } })).namespaceId;
}, 120_000);
afterAll(async () => node?.destroy());

describe('contexts over HTTP', () => {
  it('creates a context: init ran, it is registered in the group, and reads as the spec shapes it', async () => {
    const created = await c.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] });
    ctx = created.contextId;
    const me = await c.http.data<{ publicKey: string }>('/admin-api/identity');
    expect(created).toEqual({ contextId: ctx, memberPublicKey: me.publicKey, groupId: ns, groupCreated: false });
    const got = await c.contexts.get(ctx);
    expect(got.contextStateHash).toMatch(/^[0-9a-f]{64}$/);
    expect(got.contextStateHash).not.toBe(ALL_F);
    expect(got.dagHeads).toHaveLength(1);
    expect(got).toMatchObject({ id: ctx, applicationId: appId, applicationVersion: '1.0.0' });
    expect(await c.contexts.list()).toContainEqual({ ...got, groupId: ns });
    expect(await c.contexts.forApplication(appId)).toHaveLength(1);
    expect(await c.contexts.group(ctx)).toBe(ns);
    expect(await c.groups.contexts(ns)).toContainEqual({ contextId: ctx });
    expect(await c.contexts.identities(ctx)).toEqual({ identities: [me.publicKey], identitiesOf: 'members' });
    expect(await c.contexts.identitiesOwned(ctx)).toEqual({ identities: [me.publicKey], identitiesOf: 'node' });
    expect(await c.contexts.withExecutors(appId)).toEqual([{ id: ctx, application_id: appId, contextStateHash: got.contextStateHash, executors: [me.publicKey] }]);
    expect(Number(await c.contexts.storage(ctx))).toBeGreaterThan(0);
    expect(await c.contexts.intents(ctx)).toMatchObject({ executorKey: me.publicKey, canAuthorOnBehalf: false, releaseVersion: '1.0.0' });
  });

  it('executes set and get through /jsonrpc; the state mutation reaches the bus after commit', async () => {
    events.length = 0;
    expect(await c.rpc.execute(ctx, 'set', { key: 'k', value: 'hello' })).toBeNull();
    expect(await c.rpc.execute(ctx, 'get', { key: 'k' })).toBe('hello');
    expect(await c.rpc.execute(ctx, 'entries', {})).toEqual({ k: 'hello' });
    const after = await c.contexts.get(ctx);
    const mutations = events.filter((e) => e.type === 'context' && e.kind === 'StateMutation');
    expect(mutations).toHaveLength(1); // reads emit nothing
    const m = mutations[0] as Extract<NodeEvent, { type: 'context' }>;
    expect(m.contextId).toBe(ctx);
    expect(m.data.newRoot).toBe(after.contextStateHash);
    const ev = (m.data.events as { kind: string; data: number[]; handler: string | null }[])[0];
    expect({ kind: ev.kind, handler: ev.handler, data: JSON.parse(decode(ev.data)) }).toEqual({ kind: 'Inserted', handler: null, data: { key: 'k', value: 'hello' } });
  });

  it('answers app errors and panics as FunctionCallError and leaves the store untouched', async () => {
    const before = await c.contexts.get(ctx);
    const size = await c.contexts.storage(ctx);
    events.length = 0;
    const appErr = await rpcError(c.rpc.execute(ctx, 'get_result', { key: 'missing' }));
    expect(appErr.type).toBe('FunctionCallError');
    expect(appErr.data).toMatch(/^the method call returned an error: \[123, /);
    const panic = await rpcError(c.rpc.execute(ctx, 'get_unchecked', { key: 'missing' }));
    expect(panic.type).toBe('FunctionCallError');
    expect(panic.data).toMatch(/key not found/);
    const badArgs = await rpcError(c.rpc.execute(ctx, 'set', { key: 'only' }));
    expect(badArgs.data).toMatch(/missing field `value`/);
    expect((await rpcError(c.rpc.execute(ctx, 'nonexistent_method', {}))).type).toBe('FunctionCallError');
    expect((await rpcError(c.rpc.execute('e'.repeat(64), 'get', { key: 'k' }))).type).toBe('ContextNotFound');
    // the merge entry is the node's: a client cannot feed it operations no member made
    const reserved = await rpcError(c.rpc.execute(ctx, '__calimero_sync_next', { ops: [] }));
    expect(JSON.stringify(reserved)).toMatch(/reserved for the node/);
    expect(await c.contexts.get(ctx)).toEqual(before);
    expect(await c.contexts.storage(ctx)).toEqual(size);
    expect(await c.rpc.execute(ctx, 'get', { key: 'only' })).toBeNull();
    expect(events.filter((e) => e.type === 'context' && e.kind === 'StateMutation')).toEqual([]);
  });

  it('query answers read-only views, 409 for a write method, 400 FunctionCallError for a failing view', async () => {
    expect(await c.contexts.query(ctx, 'get', { key: 'k' })).toBe('hello');
    expect(await c.contexts.query(ctx, 'len', {})).toBe(1);
    expect(await status(c.contexts.query(ctx, 'set', { key: 'k', value: 'x' }))).toBe(409);
    const failing = await c.contexts.query(ctx, 'get', { wrong: 1 }).catch((e: unknown) => e);
    expect(failing).toBeInstanceOf(HttpError);
    expect((failing as HttpError).status).toBe(400);
    expect((failing as HttpError).body).toMatchObject({ type: 'FunctionCallError' });
    expect(await c.rpc.execute(ctx, 'get', { key: 'k' })).toBe('hello');
  });

  it('query is 403 once the node account is no longer a member of the owning group', async () => {
    const sub = (await c.http.data<{ groupId: string }>('/admin-api/groups', { method: 'POST', body: { applicationId: appId, parentGroupId: ns, visibility: 'restricted' } })).groupId;
    const inSub = (await c.contexts.create({ groupId: sub, initializationParams: [] })).contextId;
    expect(await c.contexts.query(inSub, 'len', {})).toBe(0);
    await c.http.send(`/admin-api/groups/${sub}/members`, { method: 'POST', body: { members: [{ identity: X, role: 'Admin' }] } });
    await c.http.send(`/admin-api/groups/${sub}/transfer-ownership`, { method: 'POST', body: { newOwner: X } });
    await c.http.send(`/admin-api/groups/${sub}/leave`, { method: 'POST', body: {} });
    expect(await status(c.contexts.query(inSub, 'len', {}))).toBe(403);
  });

  it('sync reports SyncStatus, resync is accepted, join is idempotent, a fresh identity is hex', async () => {
    events.length = 0;
    await c.contexts.sync(ctx);
    await c.contexts.sync();
    expect(events).toContainEqual({ type: 'context', contextId: ctx, kind: 'SyncStatus', data: { syncState: { state: 'idle' }, failureCount: 0 } });
    expect(await c.contexts.resync(ctx)).toEqual({ contextId: ctx, resyncStarted: true });
    const me = await c.http.data<{ publicKey: string }>('/admin-api/identity');
    expect(await c.contexts.join(ctx)).toEqual({ contextId: ctx, memberPublicKey: me.publicKey });
    expect(await c.contexts.newIdentity()).toMatch(/^[0-9a-f]{64}$/);
    expect(await status(c.contexts.get('nope'))).toBe(400);
  });

  it('a client key bound to one context executes there and is refused elsewhere (403)', async () => {
    const other = (await c.contexts.create({ groupId: ns, initializationParams: [] })).contextId;
    const me = await c.http.data<{ publicKey: string }>('/admin-api/identity');
    const pair = (await c.auth.createClientKey({ context_id: ctx, context_identity: me.publicKey, permissions: ['context:execute'] })).data;
    const bound = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
    await bound.http.setTokens(tokensFromPair(pair));
    expect(await bound.rpc.execute(ctx, 'get', { key: 'k' })).toBe('hello');
    const refused = await bound.rpc.execute(other, 'get', { key: 'k' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(HttpError);
    expect((refused as HttpError).status).toBe(403);
    expect((refused as HttpError).authError).toBe('permission_denied');
  });

  it('keeps contexts and their state across a restart', async () => {
    // the sync status describes this run of the node (docs/sync.md): it has a route of its own
    const before = await c.contexts.get(ctx);
    node = await node.restart();
    await connect();
    const after = await c.contexts.get(ctx);
    expect(after).toEqual(before);
    expect(after).not.toHaveProperty('sync');
    expect(await c.contexts.syncStatus(ctx)).toMatchObject({ contextId: ctx, caughtUp: true, behind: 0, quarantined: 0 });
    expect(await c.rpc.execute(ctx, 'get', { key: 'k' })).toBe('hello');
    expect(await c.rpc.execute(ctx, 'set', { key: 'k', value: 'again' })).toBeNull();
    expect((await c.contexts.get(ctx)).dagHeads).not.toEqual(before.dagHeads);
  });

  it('deletes a context: deregistered from its group and gone locally; a second delete is false', async () => {
    expect(await c.contexts.delete(ctx)).toBe(true);
    expect(await status(c.contexts.get(ctx))).toBe(404);
    expect(await c.groups.contexts(ns)).not.toContainEqual({ contextId: ctx });
    expect(await c.contexts.delete(ctx)).toBe(false);
    expect((await rpcError(c.rpc.execute(ctx, 'get', { key: 'k' }))).type).toBe('ContextNotFound');
  });
});
