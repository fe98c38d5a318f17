/**
 * Conformance: contexts, JSON-RPC and presence intents (admin spec "Contexts"; admin-wire-a §4, §7),
 * through the SDK. A real node runs the AssemblyScript kv-store test app; a context goes through
 * its whole life: create, every read, execute, query, presence, sync and resync, an application
 * switch, leave and join again, delete. Set-up through other areas (install, namespace) uses a
 * client that does not record, so this file checks only the contexts area's answers.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HttpError, RpcError, type Client } from '../../src/client/index.ts';
import { makeBundle } from '../helpers/bundles.ts';
import { startConformanceNode, type Conformance } from '../helpers/conformance.ts';
import type { TestNode } from '../helpers/node.ts';
import { ed25519FromSeed, mintProof, presenceBody, seedOf } from '../helpers/presence.ts';
import { buildTestApp } from '../helpers/wasm-apps.ts';

const ALL_F = 'f'.repeat(64);
let node: TestNode;
let conformance: Conformance;
let c: Client;
let appId: string;
let otherAppId: string;
let ns: string;

beforeAll(async () => {
  let setup: Client;
  ({ node, conformance, client: c, setup } = await startConformanceNode());
  const wasm = await buildTestApp('kv');
  appId = (await setup.applications.installDev((await makeBundle({ wasm, package: 'com.hearth.kv.conformance' })).path)).applicationId;
  otherAppId = (await setup.applications.installDev((await makeBundle({ wasm, package: 'com.hearth.kv.conformance2' })).path)).applicationId;
  ns = (await setup.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: appId } })).namespaceId;
}, 120_000);
afterAll(async () => node?.destroy());

async function statusOf(p: Promise<unknown>): Promise<number> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  if (err instanceof HttpError) return err.status;
  throw new Error(`expected an HttpError, got ${String(err)}`);
}

it('answers every context, JSON-RPC and presence-intent route as documented', async () => {
  const me = node.node.identity.publicKey;
  const created = await c.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] });
  const ctx = created.contextId;
  expect(created).toEqual({ contextId: ctx, memberPublicKey: me, groupId: ns, groupCreated: false });

  // reads
  const got = await c.contexts.get(ctx);
  expect(got).toMatchObject({ id: ctx, applicationId: appId, applicationVersion: '1.0.0' });
  expect(got.contextStateHash).not.toBe(ALL_F);
  expect(await c.contexts.list()).toEqual([{ ...got, groupId: ns }]);
  expect(await c.contexts.forApplication(appId)).toEqual([{ ...got, groupId: ns }]);
  expect(await c.contexts.withExecutors(appId)).toEqual([{ id: ctx, application_id: appId, contextStateHash: got.contextStateHash, executors: [me] }]);
  expect(await c.contexts.group(ctx)).toBe(ns);
  expect(await c.contexts.group('e'.repeat(64))).toBeNull();
  expect(BigInt(await c.contexts.storage(ctx))).toBeGreaterThan(0n);
  expect(await c.contexts.identities(ctx)).toEqual({ identities: [me], identitiesOf: 'members' });
  expect(await c.contexts.identitiesOwned(ctx)).toEqual({ identities: [me], identitiesOf: 'node' });
  expect(await c.contexts.intents(ctx)).toMatchObject({ executorAccount: node.node.identity.accountId, executorKey: me, canAuthorOnBehalf: false });

  // calls: execute through /jsonrpc (result and handled error are both 200), query a view
  expect(await c.rpc.execute(ctx, 'set', { key: 'k', value: 'v' })).toBeNull();
  expect(await c.rpc.execute(ctx, 'get', { key: 'k' })).toBe('v');
  const failed = await c.rpc.execute(ctx, 'nonexistent_method', {}).catch((e: unknown) => e);
  expect(failed).toBeInstanceOf(RpcError);
  expect((failed as RpcError).type).toBe('FunctionCallError');
  expect(await c.contexts.query(ctx, 'get', { key: 'k' })).toBe('v');
  expect(await statusOf(c.contexts.query(ctx, 'set', { key: 'k', value: 'x' }))).toBe(409);

  // a device of the node's own account relays its presence (204, no body)
  const device = ed25519FromSeed(seedOf(0x71));
  const identity = node.node.identity;
  const proof = mintProof({ signWithRoot: (m) => Buffer.from(identity.signWithRoot(m), 'hex'), rootPublicKey: identity.rootPublicKey, device });
  await c.contexts.postPresenceIntent(ctx, presenceBody({ contextId: ctx, device, proof, seq: 1, sentAtMs: Date.now(), state: { here: true } }));

  // sync on a node without peers is accepted at once; resync is flat
  await c.contexts.sync();
  await c.contexts.sync(ctx);
  expect(await c.contexts.resync(ctx, true)).toEqual({ contextId: ctx, resyncStarted: true });
  expect((await c.contexts.inviteSpecializedNode(ctx)).nonce).toMatch(/^[0-9a-f]{64}$/);

  // hearth's own sync-status routes: the spec's Context carries none of it
  expect(got).not.toHaveProperty('sync');
  const status = await c.contexts.syncStatus(ctx);
  expect(status).toMatchObject({ contextId: ctx, state: 'idle', caughtUp: true, behind: 0 });
  expect(status.reasons.map((r) => r.reason)).toContain('no_peers');
  expect((await c.contexts.syncStatuses()).map((s) => s.contextId)).toEqual([ctx]);
  expect(await statusOf(c.contexts.syncStatus('e'.repeat(64)))).toBe(404);
  expect(await statusOf(c.contexts.syncStatus('not-an-id'))).toBe(400);

  // hearth's raw state rows (admin only): every row in one page, and a value the app wrote
  const rows = await c.contexts.rawState(ctx, { limit: 500 });
  expect(rows.next).toBeNull();
  const k = rows.entries.find((e) => e.preview === 'v' && e.size === 1);
  expect(k, JSON.stringify(rows.entries)).toBeDefined();
  expect(await c.contexts.rawStateValue(ctx, k!.key)).toEqual({ key: k!.key, size: 1, encoding: 'base64', value: 'dg==', truncated: false });
  expect(await statusOf(c.contexts.rawState(ctx, { after: 'xyz' }))).toBe(400);
  expect(await statusOf(c.contexts.rawStateValue('e'.repeat(64), '00'))).toBe(404);

  // switch the application, leave and join again
  await c.contexts.updateApplication(ctx, otherAppId);
  expect((await c.contexts.get(ctx)).applicationId).toBe(otherAppId);
  await c.contexts.leave(ctx);
  expect((await c.contexts.identitiesOwned(ctx)).identities).toEqual([]);
  expect(await c.contexts.join(ctx)).toEqual({ contextId: ctx, memberPublicKey: me });
  expect((await c.contexts.identitiesOwned(ctx)).identities).toEqual([me]);

  expect(await c.contexts.delete(ctx)).toBe(true);
  expect(await statusOf(c.contexts.get(ctx))).toBe(404);
  expect(await c.contexts.delete(ctx)).toBe(false);
  expect(await c.contexts.list()).toEqual([]);

  conformance.assertAreaCovered('contexts');
});
