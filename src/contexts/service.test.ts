/**
 * The contexts service and method calls against a scripted runtime and a real governance log:
 * creation runs `init` and registers the context, failing calls leave the store untouched and emit
 * nothing, successful calls commit state, root and DAG head at once, writes are serialised per
 * context, and query's 403/409/400 rules.
 */
import { describe, expect, it } from 'vitest';
import type { Principal } from '../auth/service.ts';
import { HearthError } from '../errors.ts';
import { collect, type Codec } from '../store/store.ts';
import { RpcMethodError } from './rpc-methods.ts';
import { APP_ID, world, type World } from './testkit.ts';
import { GENESIS_PARENT, UNINITIALIZED_HASH, type ContextMeta, type DeltaRecord } from './types.ts';
import { deltaIdOf } from './executor.ts';

const owner: Principal = { keyId: 'k', keyType: 'root', rootKeyId: 'k', permissions: ['admin'], binding: { contexts: [], groups: [], applications: [] } };

const SPACES: [string, Codec][] = [
  ['ctx.meta', 'json'],
  ['ctx.members', 'json'],
  ['ctx.deltas', 'json'],
  ['ctx.state', 'bytes'],
  ['ctx.private', 'bytes'],
  ['ctx.index', 'bytes'],
];

async function snapshot(w: World): Promise<string> {
  const out: Record<string, unknown> = {};
  for (const [name, codec] of SPACES) {
    out[name] = (await collect(w.store.space<unknown>(name, codec).entries())).map(([k, v]) => [k, v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v]);
  }
  return JSON.stringify(out);
}

async function rpcError(p: Promise<unknown>): Promise<{ type: string; data: unknown }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof RpcMethodError) return { type: e.type, data: e.data };
    throw e;
  }
  throw new Error('expected an RpcMethodError');
}

async function httpKind(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof HearthError) return e.kind;
    throw e;
  }
  return 'ok';
}

async function created(w: World): Promise<string> {
  return (await w.contexts.create({ groupId: w.namespaceId, initializationParams: new Uint8Array() })).contextId;
}

const exec = (w: World, contextId: string, method: string, argsJson: unknown = {}) => w.calls.execute({ contextId, method, argsJson }, owner);

describe('create', () => {
  it('runs init, registers the context in its group and persists root, genesis delta and member at once', async () => {
    const w = await world();
    const res = await w.contexts.create({ groupId: w.namespaceId, initializationParams: new Uint8Array() });
    expect(res).toMatchObject({ memberPublicKey: w.identity.publicKey, groupId: w.namespaceId, groupCreated: false });
    expect(res.contextId).toMatch(/^[0-9a-f]{64}$/);
    const init = w.runtime.calls.at(-1)!;
    // compiled modules are cached per installed bundle (a new version is a new bundle), not per application id
    expect(init).toMatchObject({ method: 'init', readOnly: false, applicationId: 'cd'.repeat(32) });
    expect(Buffer.from(init.executorId).toString('hex')).toBe(w.identity.accountId);
    expect(w.governance.locate(w.namespaceId)!.group.contexts[res.contextId]).toBeDefined();

    const view = await w.contexts.get(res.contextId);
    expect(view.contextStateHash).not.toBe(UNINITIALIZED_HASH);
    expect(view.contextStateHash).toMatch(/^[0-9a-f]{64}$/);
    expect(view.dagHeads).toHaveLength(1);
    expect(view.applicationVersion).toBe('1.0.0');
    const deltas = await collect(w.store.space<DeltaRecord>('ctx.deltas').entries());
    expect(deltas).toHaveLength(1);
    const delta = deltas[0][1];
    expect(delta.parents).toEqual([GENESIS_PARENT]);
    expect(delta.id).toBe(deltaIdOf([GENESIS_PARENT], Buffer.from(delta.artifact, 'hex')));
    expect(view.dagHeads![0]).toEqual([...Buffer.from(delta.id, 'hex')]);
    expect(await w.contexts.identities(res.contextId, true)).toEqual([w.identity.publicKey]);
    expect((await w.contexts.list())[0]).toMatchObject({ id: res.contextId, groupId: w.namespaceId });
    expect(await w.contexts.groupOf(res.contextId)).toBe(w.namespaceId);
  });

  it('a failing init persists nothing and registers nothing', async () => {
    const w = await world();
    const before = await snapshot(w);
    const params = new TextEncoder().encode(JSON.stringify({ fail: 'bad args' }));
    await expect(w.contexts.create({ groupId: w.namespaceId, initializationParams: params })).rejects.toThrow(/application initialization failed: guest panicked: bad args/);
    expect(await snapshot(w)).toBe(before);
    expect(w.governance.locate(w.namespaceId)!.group.contexts).toEqual({});
  });

  it('derives the id from contextSeed, refuses a second context from the same seed (409) and an unknown group (404)', async () => {
    const w = await world();
    const seed = '07'.repeat(32);
    const a = await w.contexts.create({ groupId: w.namespaceId, initializationParams: new Uint8Array(), contextSeed: seed });
    expect(await httpKind(w.contexts.create({ groupId: w.namespaceId, initializationParams: new Uint8Array(), contextSeed: seed }))).toBe('conflict');
    expect(await httpKind(w.contexts.create({ groupId: 'ee'.repeat(32), initializationParams: new Uint8Array() }))).toBe('not_found');
    expect(a.contextId).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses a group whose application is not installed (404)', async () => {
    const w = await world();
    w.catalog.apps.clear();
    expect(await httpKind(w.contexts.create({ groupId: w.namespaceId, initializationParams: new Uint8Array() }))).toBe('not_found');
  });
});

describe('execute', () => {
  it('commits writes, root and a new DAG head in one batch, then publishes StateMutation', async () => {
    const w = await world();
    const id = await created(w);
    const before = (await w.store.space<ContextMeta>('ctx.meta').get(id))!;
    w.events.length = 0;
    expect(await exec(w, id, 'set', { key: 'k', value: 'hello' })).toEqual({ output: null });
    const after = (await w.store.space<ContextMeta>('ctx.meta').get(id))!;
    expect(after.rootHash).not.toBe(before.rootHash);
    expect(after.dagHeads).toHaveLength(1);
    const head = (await w.store.space<DeltaRecord>('ctx.deltas').get(`${id}/${after.dagHeads[0]}`))!;
    expect(head.parents).toEqual(before.dagHeads);
    expect(w.events).toEqual([
      {
        type: 'context',
        contextId: id,
        kind: 'StateMutation',
        data: { newRoot: after.rootHash, events: [{ kind: 'Inserted', data: [...new TextEncoder().encode('{"key":"k","value":"hello"}')], handler: null }] },
      },
    ]);
    expect(await exec(w, id, 'get', { key: 'k' })).toEqual({ output: 'hello' });
    expect(w.runtime.calls.at(-1)!.readOnly).toBe(true);
    expect(w.events).toHaveLength(1);
  });

  it('a failing call (application error or panic) leaves the store untouched and emits no event', async () => {
    const w = await world();
    const id = await created(w);
    await exec(w, id, 'set', { key: 'k', value: 'v' });
    const before = await snapshot(w);
    w.events.length = 0;
    expect(await rpcError(exec(w, id, 'fail'))).toEqual({ type: 'FunctionCallError', data: 'the method call returned an error: [123, 125]' });
    expect(await rpcError(exec(w, id, 'panic'))).toEqual({ type: 'FunctionCallError', data: 'guest panicked: boom at src/lib.rs:1:1' });
    expect(await rpcError(exec(w, id, 'nonexistent_method'))).toEqual({ type: 'FunctionCallError', data: 'method "nonexistent_method" not found' });
    expect(await snapshot(w)).toBe(before);
    expect(w.events).toEqual([]);
  });

  it('publishes nothing when the commit batch fails, and the next call still commits', async () => {
    const w = await world();
    const id = await created(w);
    const before = await snapshot(w);
    w.events.length = 0;
    const batch = w.store.batch.bind(w.store);
    w.store.batch = async () => Promise.reject(new Error('disk full'));
    await expect(exec(w, id, 'set', { key: 'k', value: 'v' })).rejects.toThrow('disk full');
    w.store.batch = batch;
    expect(await snapshot(w)).toBe(before);
    expect(w.events).toEqual([]);
    await exec(w, id, 'set', { key: 'k', value: 'v' });
    expect(w.events.map((e) => e.kind)).toEqual(['StateMutation']);
  });

  it('answers the reference error objects for bad params, unknown and uninitialized contexts, bad output', async () => {
    const w = await world();
    const id = await created(w);
    expect((await rpcError(w.calls.execute({ contextId: 'nope', method: 'get' }, owner))).type).toBe('ParseError');
    expect((await rpcError(w.calls.execute({ contextId: id, method: '' }, owner))).type).toBe('ParseError');
    expect((await rpcError(w.calls.execute({ contextId: id, method: 'a\nb' }, owner))).type).toBe('ParseError');
    expect(await rpcError(exec(w, 'ee'.repeat(32), 'get'))).toEqual({ type: 'ContextNotFound', data: undefined });
    expect(await rpcError(exec(w, id, 'bad_output'))).toMatchObject({ type: 'SerdeError', data: { message: expect.stringContaining('not JSON') } });
    expect(await exec(w, id, 'big')).toEqual({ output: { n: 18446744073709551615n } });
    // a context joined but never pulled reads as uninitialized
    await w.store.space('ctx.meta').del(id);
    await w.contexts.join(id);
    expect((await w.contexts.get(id)).contextStateHash).toBe(UNINITIALIZED_HASH);
    expect(await rpcError(exec(w, id, 'get', { key: 'k' }))).toEqual({ type: 'Uninitialized', data: undefined });
    w.catalog.apps.clear();
    expect(await rpcError(exec(w, id, 'get'))).toEqual({
      type: 'ApplicationNotInstalled',
      data: { application_id: APP_ID, message: `application ${APP_ID} is not installed on this node: install it with hearth app install-dev <bundle.mpk>` },
    });
  });

  it('refuses a client key bound elsewhere with 403, and has no executor after leave', async () => {
    const w = await world();
    const id = await created(w);
    const bound: Principal = { ...owner, keyType: 'client', binding: { contexts: ['ee'.repeat(32)], groups: [], applications: [] } };
    expect(await httpKind(w.calls.execute({ contextId: id, method: 'get', argsJson: { key: 'k' } }, bound))).toBe('forbidden');
    const mine: Principal = { ...bound, binding: { contexts: [id], groups: [], applications: [] } };
    expect(await w.calls.execute({ contextId: id, method: 'get', argsJson: { key: 'k' } }, mine)).toEqual({ output: null });
    await w.contexts.leave(id);
    expect(await rpcError(exec(w, id, 'get', { key: 'k' }))).toEqual({ type: 'FunctionCallError', data: 'No owned identity found for this context' });
    expect(await w.contexts.join(id)).toEqual({ contextId: id, memberPublicKey: w.identity.publicKey });
    expect(await w.contexts.join(id)).toEqual({ contextId: id, memberPublicKey: w.identity.publicKey });
  });

  it('serialises writes per context, runs writes of different contexts and reads together', async () => {
    const w = await world();
    const a = await created(w);
    const b = await created(w);
    let open!: () => void;
    w.runtime.gates.set('slow_set', new Promise<void>((r) => (open = r)));
    w.runtime.maxActive = 0;
    const writes = [exec(w, a, 'slow_set', { key: 'x', value: '1' }), exec(w, a, 'slow_set', { key: 'y', value: '2' }), exec(w, b, 'slow_set', { key: 'x', value: '3' })];
    await new Promise((r) => setTimeout(r, 20));
    expect(w.runtime.active).toBe(2); // one per context: a's second write waits for the first
    open();
    await Promise.all(writes);
    expect(w.runtime.maxActive).toBe(2);
    const meta = (await w.store.space<ContextMeta>('ctx.meta').get(a))!;
    const head = (await w.store.space<DeltaRecord>('ctx.deltas').get(`${a}/${meta.dagHeads[0]}`))!;
    const parent = (await w.store.space<DeltaRecord>('ctx.deltas').get(`${a}/${head.parents[0]}`))!;
    expect(parent.parents).toHaveLength(1); // a chain: each write saw the head its predecessor left

    let release!: () => void;
    w.runtime.gates.set('slow_get', new Promise<void>((r) => (release = r)));
    w.runtime.maxActive = 0;
    const reads = [exec(w, a, 'slow_get', { key: 'x' }), exec(w, a, 'slow_get', { key: 'y' })];
    await new Promise((r) => setTimeout(r, 20));
    expect(w.runtime.active).toBe(2);
    release();
    expect(await Promise.all(reads)).toEqual([{ output: '1' }, { output: '2' }]);
  });
});

describe('query', () => {
  it('answers a read-only method, 409 for others, 400 FunctionCallError on failure, 403 outside the group', async () => {
    const w = await world();
    const id = await created(w);
    await exec(w, id, 'set', { key: 'k', value: 'v' });
    w.events.length = 0;
    expect(await w.calls.query(id, 'get', { key: 'k' })).toEqual({ output: 'v' });
    expect(w.runtime.calls.at(-1)).toMatchObject({ method: 'get', readOnly: true });
    expect(await httpKind(w.calls.query(id, 'set', { key: 'k', value: 'w' }))).toBe('conflict');
    w.catalog.readOnly.add('panic');
    const err = await w.calls.query(id, 'panic', {}).catch((e: HearthError) => e);
    expect(err).toBeInstanceOf(HearthError);
    expect((err as HearthError).kind).toBe('bad_request');
    expect((err as HearthError).extra.body).toEqual({ type: 'FunctionCallError' });
    expect(await httpKind(w.calls.query('ee'.repeat(32), 'get', {}))).toBe('not_found');
    expect(w.events).toEqual([]);
    // the node's account leaves the owning group's member list (as a replicated removal would do)
    w.governance.locate(w.namespaceId)!.group.members = {};
    expect(await httpKind(w.calls.query(id, 'get', { key: 'k' }))).toBe('forbidden');
  });
});

describe('delete, sync, intents, identities', () => {
  it('delete deregisters and forgets the context; an unknown one answers false', async () => {
    const w = await world();
    const id = await created(w);
    await exec(w, id, 'set', { key: 'k', value: 'v' });
    expect(await w.contexts.delete(id)).toBe(true);
    expect(w.governance.locate(w.namespaceId)!.group.contexts[id]).toBeUndefined();
    expect(await w.contexts.delete(id)).toBe(false);
    expect(await httpKind(w.contexts.get(id))).toBe('not_found');
    expect(await w.contexts.storageSize(id)).toBe(0n);
    const left = await snapshot(w);
    expect(left).not.toContain(id);
  });

  it('sync reports SyncStatus, resync keeps state, intents answers canAuthorOnBehalf false, new identities are hex', async () => {
    const w = await world();
    const id = await created(w);
    w.events.length = 0;
    await w.contexts.sync(id);
    expect(w.events).toEqual([{ type: 'context', contextId: id, kind: 'SyncStatus', data: { syncState: { state: 'idle' }, failureCount: 0 } }]);
    expect(await w.contexts.resync(id)).toEqual({ contextId: id, resyncStarted: true });
    expect(await httpKind(w.contexts.sync('ee'.repeat(32)))).toBe('not_found');
    expect(await w.contexts.intents(id)).toEqual({
      executorAccount: w.identity.accountId,
      executorKey: w.identity.publicKey,
      releaseBytecodeId: 'cd'.repeat(32),
      releaseVersion: '1.0.0',
      canAuthorOnBehalf: false,
      groupId: (await w.contexts.groupOf(id))!,
    });
    expect((await w.contexts.newIdentity()).publicKey).toMatch(/^[0-9a-f]{64}$/);
    expect(await w.contexts.storageSize(id)).toBeGreaterThan(0n);
    expect(await w.contexts.withExecutors(APP_ID)).toEqual([
      { id, application_id: APP_ID, contextStateHash: (await w.contexts.get(id)).contextStateHash, executors: [w.identity.publicKey] },
    ]);
  });

  it("serves the sync status apart from the Context: 503 without a network, 404 unknown, the syncer's view with its id", async () => {
    const w = await world();
    const id = await created(w);
    expect(await httpKind(w.contexts.syncStatus(id))).toBe('unavailable');
    expect(await httpKind(w.contexts.syncStatuses())).toBe('unavailable');
    const status = { state: 'idle' as const, caughtUp: true, behind: 0, pending: 0, quarantined: 0, reasons: [], peers: [], lastSyncAt: null, lastError: null, failureCount: 0 };
    const asked: string[] = [];
    w.contexts.attachSync({ syncNow: () => undefined, forget: () => undefined, view: async (c) => (asked.push(c), status) });
    expect(await w.contexts.syncStatus(id)).toEqual({ contextId: id, ...status });
    expect(await w.contexts.syncStatuses()).toEqual([{ contextId: id, ...status }]);
    expect(await httpKind(w.contexts.syncStatus('ee'.repeat(32)))).toBe('not_found');
    expect(asked).toEqual([id, id]); // an unknown context is refused before the syncer is asked
    // the spec's Context carries no sync status, with or without a network
    expect(await w.contexts.get(id)).not.toHaveProperty('sync');
    expect((await w.contexts.list())[0]).not.toHaveProperty('sync');
  });

  it('creates with an identitySecret: that key is the member, owned by this node', async () => {
    const w = await world();
    const res = await w.contexts.create({ groupId: w.namespaceId, initializationParams: new Uint8Array(), identitySecret: '09'.repeat(32) });
    expect(res.memberPublicKey).not.toBe(w.identity.publicKey);
    expect(await w.contexts.identities(res.contextId, true)).toEqual([res.memberPublicKey]);
    expect(Buffer.from(w.runtime.calls.at(-1)!.deviceId).toString('hex')).toBe(res.memberPublicKey);
  });
});
