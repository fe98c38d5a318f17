/**
 * Group upgrades and migration end to end (issue #15), on one node driven through the SDK: the
 * upgrade op is a governance op like any other, so once replication lands it reaches peers, which
 * migrate their own contexts; this file shows the one-node half — the op applied, this node's
 * contexts migrated, its status and progress frames.
 *
 * The application is the kv-store test app: version 1.0.0, then 2.0.0 (same package and key, so
 * the same application id) whose ABI declares the migration entry `migrate` from 1.0.0. It refuses
 * while a context holds the key `block`, which lets a test fail a migration on purpose.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RpcError, type Client, type GroupUpgradeStatus } from '../../../src/client/index.ts';
import { makeBundle, signingKey } from '../../helpers/bundles.ts';
import { adminClient, startTestNode, type TestNode } from '../../helpers/node.ts';
import { RawStream, subscribeRaw } from '../../helpers/sse.ts';
import { httpError } from '../../helpers/status.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

let node: TestNode;
let c: Client;
let token: string;
let appId: string;
const PKG = 'com.hearth.upgrade';
/** every version is signed by the same key: the same package and key give the same application id */
const KEY = signingKey();

/** Polls `read` until `pred` holds (migration runs after the upgrade call answers). */
async function eventually<T>(read: () => Promise<T>, pred: (v: T) => boolean, what: string, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (pred(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const call = (contextId: string, method: string, args: unknown = {}) => c.rpc.execute(contextId, method, args);
const set = (contextId: string, key: string, value: string) => call(contextId, 'set', { key, value });
const get = (contextId: string, key: string) => call(contextId, 'get', { key });
const version = async (contextId: string) => (await c.contexts.get(contextId)).applicationVersion;
const newContext = async (groupId: string) => (await c.contexts.create({ groupId, applicationId: appId, initializationParams: [] })).contextId;
const settled = (s: GroupUpgradeStatus | null) => s !== null && (s.status !== 'in_progress' || (s.localContextsSwapped ?? 0) + (s.localContextsFailed ?? 0) === s.localContextsTotal);

beforeAll(async () => {
  node = await startTestNode();
  c = await adminClient(node);
  token = (await c.tokenStore.get())!.accessToken;
  const v1 = await makeBundle({ wasm: await buildTestApp('kv'), package: PKG, version: '1.0.0', key: KEY });
  appId = (await c.applications.installDev(v1.path)).applicationId;
}, 120_000);
afterAll(() => node?.destroy());

describe('upgrading a group with contexts', { timeout: 180_000 }, () => {
  let ns: string;
  let sub: string;
  let c1: string;
  let c2: string;
  let c3: string;

  beforeAll(async () => {
    ns = (await c.namespaces.create({ applicationId: appId, name: 'upg' })).namespaceId;
    sub = (await c.groups.create({ applicationId: appId, parentGroupId: ns, name: 'team' })).groupId;
    [c1, c2, c3] = [await newContext(ns), await newContext(ns), await newContext(sub)];
    await set(c1, 'a', '1');
    await set(c2, 'block', 'yes');
    await set(c3, 'b', '2');
  });

  it('keeps contexts on their version when a newer one is installed', async () => {
    const v2 = await makeBundle({ wasm: await buildTestApp('kv_v2'), package: PKG, version: '2.0.0', key: KEY });
    expect((await c.applications.installDev(v2.path)).applicationId).toBe(appId);
    expect(await version(c1)).toBe('1.0.0');
    const err = await call(c1, 'version').then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(RpcError); // v1 has no such method: it still runs v1 code
    expect((await c.contexts.intents(c1)).releaseVersion).toBe('1.0.0');
    expect(await c.upgrades.status(ns)).toBeNull();
  });

  it('refuses another application, an unknown version, the same version and a downgrade', async () => {
    const other = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.other' });
    const otherId = (await c.applications.installDev(other.path)).applicationId;
    const refusal = async (p: Promise<unknown>) => {
      const e = await httpError(p);
      return [e.status, e.errorText];
    };
    expect(await refusal(c.upgrades.upgrade(ns, { targetApplicationId: otherId }))).toEqual([409, expect.stringContaining('same application')]);
    expect(await refusal(c.upgrades.upgrade(ns, { targetApplicationId: appId, version: '9.9.9' }))).toEqual([404, expect.stringContaining('version 9.9.9')]);
    expect(await refusal(c.upgrades.upgrade(ns, { targetApplicationId: appId, version: '1.0.0' }))).toEqual([409, expect.stringContaining('already runs version 1.0.0')]);
    expect(await refusal(c.upgrades.upgrade('9'.repeat(64), { targetApplicationId: appId }))).toEqual([404, expect.any(String)]);
    expect((await httpError(c.upgrades.upgrade(ns, { applicationId: appId } as never))).status).toBe(400);
    expect(await refusal(c.upgrades.retry(ns))).toEqual([404, expect.stringContaining('no upgrade')]);
  });

  it('migrates with cascade: progress frames, one failure left usable on 1.0.0, retry after fixing the data', async () => {
    const stream = await RawStream.open(node.url, token);
    try {
      await stream.until((f) => f.length >= 1);
      expect((await subscribeRaw(node.url, token, { id: stream.sessionId, method: 'subscribe', params: { groupIds: [ns] } })).status).toBe(200);

      const started = await c.upgrades.upgrade(ns, { targetApplicationId: appId, cascade: true });
      expect(started).toMatchObject({ groupId: ns, status: 'in_progress', localContextsTotal: 2 });

      const root = await eventually(() => c.upgrades.status(ns), settled, 'the root to settle');
      expect(root).toMatchObject({ fromVersion: '1.0.0', toVersion: '2.0.0', status: 'in_progress', localContextsTotal: 2, localContextsSwapped: 1, localContextsFailed: 1, completedAt: null });
      expect(root!.initiatedBy).toBe((await c.accounts.identity()).publicKey);
      const team = await eventually(() => c.upgrades.status(sub), (s) => s?.status === 'completed', 'the subgroup to complete');
      expect(team).toMatchObject({ status: 'completed', localContextsTotal: null, localContextsSwapped: null, localContextsFailed: null, completedAt: expect.any(Number) });
      expect((await c.groups.info(ns)).activeUpgrade).toMatchObject({ status: 'in_progress', localContextsFailed: 1 });
      expect((await c.groups.info(sub)).activeUpgrade).toBeUndefined();

      // migrated contexts run 2.0.0 with the migration's write; the failed one runs 1.0.0, untouched
      expect(await version(c1)).toBe('2.0.0');
      expect(await get(c1, '__migrated')).toBe('1.0.0->2.0.0');
      expect(await get(c1, 'a')).toBe('1');
      expect(await call(c1, 'version')).toBe('2.0.0');
      expect(await version(c3)).toBe('2.0.0');
      expect(await version(c2)).toBe('1.0.0');
      expect(await get(c2, '__migrated')).toBeNull();
      await set(c2, 'still', 'writable');
      expect(await get(c2, 'still')).toBe('writable');

      const frames = await stream.until((f) => f.some((x) => x.data.result?.type === 'MigrationProgress'), 10_000, 'MigrationProgress');
      const results = frames.filter((f) => f.data.result).map((f) => f.data.result);
      expect(results[0]).toEqual({ groupId: ns, type: 'MigrationStarted', data: { fromVersion: '1.0.0', toVersion: '2.0.0', toStateVersion: 2, localContextsTotal: 3 } });
      expect(results.filter((r) => r.type === 'CascadeProgress').map((r) => r.data.subgroupId).sort()).toEqual([ns, ns, sub].sort());
      expect(results.find((r) => r.type === 'MigrationProgress')).toEqual({ groupId: ns, type: 'MigrationProgress', data: { migrated: 0, inProgress: 0, unknown: 0, failed: 1, total: 1 } });
      expect(results.some((r) => r.type === 'MigrationCompleted')).toBe(false);

      const status = await c.upgrades.migrationStatus(ns);
      expect(status).toMatchObject({ targetVersion: 2, expectedMembers: 1, rollup: { failed: 1, total: 1, allMigrated: false, membersPendingSignature: 0 } });
      expect(status.members).toEqual([expect.objectContaining({ state: 'failed', report: expect.objectContaining({ schemaVersion: 2, residueAuto: 1, migrationFailed: 'apply_failed' }) })]);
      const cascade = await c.upgrades.cascadeStatus(ns);
      expect(cascade.map((e) => e.groupId)).toEqual([ns, sub]);
      expect(cascade[0].cascadeHlc).toEqual(expect.any(String));
      expect(cascade[0].cascadeHlc).toBe(cascade[1].cascadeHlc);

      // another upgrade waits for this one; a retry without fixing the data fails again
      expect((await httpError(c.upgrades.upgrade(sub, { targetApplicationId: appId }))).status).toBe(409);
      await c.upgrades.retry(ns);
      expect(await eventually(() => c.upgrades.status(ns), settled, 'the retry to settle')).toMatchObject({ localContextsFailed: 1 });

      await call(c2, 'remove', { key: 'block' });
      expect(await c.upgrades.retry(ns)).toMatchObject({ groupId: ns, status: 'in_progress', localContextsFailed: 0 });
      expect(await eventually(() => c.upgrades.status(ns), (s) => s?.status === 'completed', 'completion')).toMatchObject({ completedAt: expect.any(Number) });
      expect(await version(c2)).toBe('2.0.0');
      expect(await get(c2, 'still')).toBe('writable');
      expect(await get(c2, '__migrated')).toBe('1.0.0->2.0.0');
      await stream.until((f) => f.some((x) => x.data.result?.type === 'MigrationCompleted'), 10_000, 'MigrationCompleted');
      expect((await c.upgrades.migrationStatus(ns)).rollup).toMatchObject({ migrated: 1, allMigrated: true });
      expect((await httpError(c.upgrades.retry(ns))).status).toBe(409);

      // a context created after the upgrade starts on the group's new version
      expect(await version(await newContext(ns))).toBe('2.0.0');
      expect((await c.groups.info(ns)).appKey).toBe((await c.contexts.intents(c1)).releaseBytecodeId);
    } finally {
      stream.close();
    }
  });

  it('answers the migration routes for namespaces only', async () => {
    expect((await httpError(c.upgrades.migrationStatus(sub))).status).toBe(400);
    expect((await httpError(c.upgrades.abort(sub))).status).toBe(400);
    expect((await httpError(c.upgrades.cascadeStatus('9'.repeat(64)))).status).toBe(404);
    expect(await c.upgrades.abort(ns)).toEqual({ namespaceId: ns, aborted: false });
  });
});

describe('aborting a migration', { timeout: 180_000 }, () => {
  it('leaves failed contexts on the previous version and points the group back at it', async () => {
    // a namespace pinned to 1.0.0 by its appKey (the version's bundle blob id): its contexts start there
    const v1 = (await c.applications.versions(appId)).find((v) => v.version === '1.0.0')!;
    const ns = (await c.namespaces.create({ applicationId: appId, appKey: v1.blobId, name: 'abort' })).namespaceId;
    const ctx = await newContext(ns);
    expect(await version(ctx)).toBe('1.0.0');
    await set(ctx, 'block', 'yes');
    await c.upgrades.upgrade(ns, { targetApplicationId: appId, version: '2.0.0' });
    await eventually(() => c.upgrades.status(ns), (s) => s?.localContextsFailed === 1, 'the failure');

    expect(await c.upgrades.abort(ns)).toEqual({ namespaceId: ns, aborted: true });
    expect(await c.upgrades.status(ns)).toMatchObject({ status: 'aborted', localContextsFailed: 1 });
    expect(await c.upgrades.abort(ns)).toEqual({ namespaceId: ns, aborted: false });
    expect((await httpError(c.upgrades.retry(ns))).status).toBe(409);
    expect(await version(ctx)).toBe('1.0.0');
    await set(ctx, 'after', 'abort');
    expect(await get(ctx, 'after')).toBe('abort');
    expect(await version(await newContext(ns))).toBe('1.0.0');
    expect((await c.groups.info(ns)).activeUpgrade).toBeUndefined();

    // a new upgrade after an abort is allowed
    await call(ctx, 'remove', { key: 'block' });
    await c.upgrades.upgrade(ns, { targetApplicationId: appId });
    expect(await eventually(() => c.upgrades.status(ns), (s) => s?.status === 'completed', 'the second upgrade')).toMatchObject({ toVersion: '2.0.0' });
  });
});

describe('refusals that need their own group', { timeout: 180_000 }, () => {
  it('refuses a group without contexts and a node lacking MANAGE_APPLICATION', async () => {
    const empty = (await c.namespaces.create({ applicationId: appId, name: 'empty' })).namespaceId;
    expect((await httpError(c.upgrades.upgrade(empty, { targetApplicationId: appId }))).errorText).toContain('no contexts');

    // a node that is no longer an admin (and holds no MANAGE_APPLICATION) may not upgrade
    const demoted = (await c.namespaces.create({ applicationId: appId, name: 'demoted' })).namespaceId;
    await newContext(demoted);
    const me = (await c.accounts.identity()).accountId;
    await c.groups.addMembers(demoted, [{ identity: '7'.repeat(64), role: 'Admin' }]);
    await c.groups.setMemberRole(demoted, me, 'Member');
    const refused = await httpError(c.upgrades.upgrade(demoted, { targetApplicationId: appId, version: '2.0.0' }));
    expect([refused.status, refused.errorText]).toEqual([403, expect.stringContaining('MANAGE_APPLICATION')]);
  });

  it('refuses a target without an embedded ABI unless forceCodeOnly, then swaps the code alone', async () => {
    const ns = (await c.namespaces.create({ applicationId: appId, name: 'code-only' })).namespaceId;
    const ctx = await newContext(ns);
    expect(await version(ctx)).toBe('2.0.0');
    await set(ctx, 'kept', 'yes');
    const v3 = await makeBundle({ wasm: await buildTestApp('kv_v2', { noAbi: true }), package: PKG, version: '3.0.0', key: KEY });
    await c.applications.installDev(v3.path);
    const refused = await httpError(c.upgrades.upgrade(ns, { targetApplicationId: appId }));
    expect([refused.status, refused.errorText]).toEqual([409, expect.stringContaining('forceCodeOnly')]);
    await c.upgrades.upgrade(ns, { targetApplicationId: appId, forceCodeOnly: true });
    await eventually(() => c.upgrades.status(ns), (s) => s?.status === 'completed', 'the code-only upgrade');
    expect(await version(ctx)).toBe('3.0.0');
    expect(await get(ctx, 'kept')).toBe('yes');
    expect(await get(ctx, '__migrated')).toBeNull();
  });
});

describe('a node stopped before it migrated', { timeout: 180_000 }, () => {
  it('resumes migrating the contexts an applied upgrade has not moved, after a restart', async () => {
    const v1 = (await c.applications.versions(appId)).find((v) => v.version === '1.0.0')!;
    const ns = (await c.namespaces.create({ applicationId: appId, appKey: v1.blobId, name: 'restart' })).namespaceId;
    const ctx = await newContext(ns);
    await set(ctx, 'kept', 'yes');
    await node.node.upgrades.stop(); // the op still applies; this node just does not migrate
    await c.upgrades.upgrade(ns, { targetApplicationId: appId, version: '2.0.0' });
    expect(await c.upgrades.status(ns)).toMatchObject({ status: 'in_progress', localContextsSwapped: 0, localContextsFailed: 0 });
    expect(await version(ctx)).toBe('1.0.0');

    node = await node.restart();
    expect(await eventually(() => c.upgrades.status(ns), (s) => s?.status === 'completed', 'the resumed migration')).toMatchObject({ toVersion: '2.0.0' });
    expect(await version(ctx)).toBe('2.0.0');
    expect(await get(ctx, '__migrated')).toBe('1.0.0->2.0.0');
    expect(await get(ctx, 'kept')).toBe('yes');
  });
});
