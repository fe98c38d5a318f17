/**
 * Group upgrades across node processes (issue #15 with the network of #12/#13): three real nodes on
 * 127.0.0.1 driven through the SDK, running the kv-store test app 1.0.0 and 2.0.0 (same package and
 * key, so the same application id; 2.0.0 declares the migration `migrate` from 1.0.0 and has a
 * `version` method 1.0.0 lacks). A and B install both versions; C installs only 1.0.0.
 *
 * What it shows: the upgrade op A publishes reaches B and C like any governance op; each node
 * migrates its own copy of the context; A and B end on 2.0.0 with one state; C, lacking 2.0.0,
 * fetches its bundle from A and B (issue #34 §1 extended to upgrades: src/contexts/app-fetch.ts),
 * migrates by itself and converges with the others.
 *
 * The edge "a migration delta made on A reaches B before B migrated": B would have applied it with
 * 1.0.0 code through `__calimero_sync_next`. A node now defers every remote delta of a context
 * whose local migration is pending (src/sync/apply.ts, unit-tested in src/sync/service.test.ts),
 * and pulls them again once the context migrated, so 2.0.0 deltas are merged by 2.0.0 code only. C
 * passes through that situation while its bundle is on its way. Each node's migration heartbeats
 * (src/upgrades/heartbeats.ts) reach the others, so `migration-status` on any of them ends with the
 * whole fleet migrated. (For this app the two merges
 * happen to be the same code — 2.0.0 re-exports 1.0.0's `__calimero_sync_next` — so even without
 * the deferral the state would converge; the deferral matters for applications whose layout changes.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RpcError } from '../../../src/client/index.ts';
import { makeBundle, signingKey, type MadeBundle } from '../../helpers/bundles.ts';
import { eventually, joinContext, startCluster, type Cluster, type ClusterNode } from '../../helpers/cluster.ts';
import { httpError } from '../../helpers/status.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

let cluster: Cluster;
let a: ClusterNode, b: ClusterNode, c: ClusterNode;
let v2: MadeBundle;
let appId: string;
let ns: string;
let ctx: string;
const PKG = 'com.hearth.upgrade.net';
const KEY = signingKey();

const entries = (n: ClusterNode) => n.client.rpc.execute<Record<string, string>>(ctx, 'entries', {});
const set = (n: ClusterNode, key: string, value: string) => n.client.rpc.execute(ctx, 'set', { key, value });
const info = (n: ClusterNode) => n.client.contexts.get(ctx);
const syncOf = (n: ClusterNode) => n.client.contexts.syncStatus(ctx);
const status = (n: ClusterNode) => n.client.upgrades.status(ns);

/** Same root and same entries on every node named. */
async function converged(nodes: ClusterNode[]): Promise<boolean> {
  const [hashes, all] = await Promise.all([Promise.all(nodes.map(async (n) => (await info(n)).contextStateHash)), Promise.all(nodes.map(entries))]);
  return hashes.every((h) => h === hashes[0] && h !== 'f'.repeat(64)) && all.every((e) => JSON.stringify(e) === JSON.stringify(all[0]));
}

beforeAll(async () => {
  cluster = await startCluster(3);
  [a, b, c] = cluster.nodes as [ClusterNode, ClusterNode, ClusterNode];
  const v1 = await makeBundle({ wasm: await buildTestApp('kv'), package: PKG, version: '1.0.0', key: KEY });
  v2 = await makeBundle({ wasm: await buildTestApp('kv_v2'), package: PKG, version: '2.0.0', key: KEY });
  for (const n of cluster.nodes) appId = (await n.client.applications.installDev(v1.path)).applicationId;
  for (const n of [a, b]) expect((await n.client.applications.installDev(v2.path)).applicationId).toBe(appId);
  // the namespace pins 1.0.0 (its bundle blob id), so its contexts start there though 2.0.0 is installed
  const v1Blob = (await a.client.applications.versions(appId)).find((v) => v.version === '1.0.0')!.blobId;
  ns = (await a.client.namespaces.create({ applicationId: appId, appKey: v1Blob, name: 'upgnet' })).namespaceId;
  ctx = (await a.client.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
  await set(a, 'a0', 'from-a');
  await joinContext(a, b, ns, ctx);
  await joinContext(a, c, ns, ctx);
}, 120_000);

afterAll(async () => {
  await cluster?.destroy();
});

describe('a group upgrade across three node processes', { timeout: 90_000 }, () => {
  it('before the upgrade: every node runs 1.0.0 and writes on each converge', async () => {
    await set(b, 'b0', 'from-b');
    await set(c, 'c0', 'from-c');
    await eventually('the three nodes converge on 1.0.0', () => converged([a, b, c]));
    for (const n of [a, b, c]) expect((await info(n)).applicationVersion).toBe('1.0.0');
    expect(await entries(a)).toEqual({ a0: 'from-a', b0: 'from-b', c0: 'from-c' });
    const err = await b.client.rpc.execute(ctx, 'version', {}).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(RpcError); // 1.0.0 has no `version`
  });

  it('the upgrade op reaches B and C; A and B migrate their own copies and converge on 2.0.0', async () => {
    const started = await a.client.upgrades.upgrade(ns, { targetApplicationId: appId, version: '2.0.0' });
    expect(started.groupId).toBe(ns);
    const aKey = (await a.client.accounts.identity()).publicKey;

    for (const n of [a, b]) {
      const s = await eventually(`${n.name} completes its migration`, async () => (await status(n))?.status === 'completed', 30_000).then(() => status(n));
      // counters are per node and null once completed; who started it is A, on every node
      expect(s).toMatchObject({ fromVersion: '1.0.0', toVersion: '2.0.0', initiatedBy: aKey, localContextsTotal: null, completedAt: expect.any(Number) });
      expect((await info(n)).applicationVersion).toBe('2.0.0');
      expect(await n.client.rpc.execute(ctx, 'version', {})).toBe('2.0.0');
    }
    await eventually('A and B converge after migrating', () => converged([a, b]), 30_000);
    expect(await entries(b)).toEqual({ a0: 'from-a', b0: 'from-b', c0: 'from-c', __migrated: '1.0.0->2.0.0' });

    // the cascade view is the replicated record plus this node's own progress: the same group on A and B
    for (const n of [a, b]) {
      const cascade = await n.client.upgrades.cascadeStatus(ns);
      expect(cascade.map((e) => [e.groupId, e.upgrade.status, e.upgrade.toVersion])).toEqual([[ns, 'completed', '2.0.0']]);
      expect(cascade[0].cascadeHlc).toBeUndefined(); // not a cascade upgrade
    }
    // the fleet view: each node reports itself and hears the others' migration heartbeats, so A and
    // B see each other migrated (C may still be fetching 2.0.0: in progress, or failed for want of it)
    for (const [n, other] of [
      [a, b],
      [b, a],
    ] as const) {
      const otherKey = (await other.client.accounts.identity()).publicKey;
      const row = async () => (await n.client.upgrades.migrationStatus(ns)).members.find((m) => m.peer === otherKey);
      await eventually(`${n.name} hears that ${other.name} migrated`, async () => (await row())?.state === 'migrated', 30_000);
      expect(await row()).toMatchObject({ report: { schemaVersion: 2, residueAuto: 0, residueIdentity: 0, authoredRemaining: 0, reportedAt: expect.any(Number) } });
      const fleet = await n.client.upgrades.migrationStatus(ns);
      const me = await n.client.accounts.identity();
      expect(fleet).toMatchObject({ targetVersion: 2, expectedMembers: 3, rollup: { total: 3 } });
      expect(fleet.rollup.migrated).toBeGreaterThanOrEqual(2);
      expect(fleet.members.find((m) => m.account === me.accountId)).toMatchObject({ state: 'migrated', report: expect.objectContaining({ schemaVersion: 2, residueAuto: 0 }) });
    }
  });

  it('C, which never installed 2.0.0, fetches it from A and B, migrates by itself and converges on 2.0.0', async () => {
    await eventually('C completes its migration', async () => (await status(c))?.status === 'completed', 60_000);
    const fetched = (await c.client.applications.versions(appId)).find((v) => v.version === '2.0.0');
    expect(fetched?.blobId).toBe((await a.client.applications.versions(appId)).find((v) => v.version === '2.0.0')!.blobId);
    expect((await info(c)).applicationVersion).toBe('2.0.0');
    expect(await c.client.rpc.execute(ctx, 'version', {})).toBe('2.0.0');
    // a plain member may not retry an upgrade (MANAGE_APPLICATION): it never had to
    expect((await httpError(c.client.upgrades.retry(ns))).status).toBe(403);
    await eventually('the three nodes converge', () => converged([a, b, c]), 30_000);
    expect(await entries(c)).toEqual({ a0: 'from-a', b0: 'from-b', c0: 'from-c', __migrated: '1.0.0->2.0.0' });
    // C's heartbeat reaches A and B: every node now reads the whole fleet as migrated
    for (const n of [a, b, c]) await eventually(`${n.name} reads the fleet as migrated`, async () => (await n.client.upgrades.migrationStatus(ns)).rollup.allMigrated, 30_000);
    expect((await a.client.upgrades.migrationStatus(ns)).rollup).toMatchObject({ migrated: 3, inProgress: 0, unknown: 0, failed: 0, total: 3, allMigrated: true });
  });

  it('writes after the upgrade replicate between the three nodes', async () => {
    await set(a, 'a1', 'after-a');
    await set(b, 'b1', 'after-b');
    await set(c, 'c1', 'after-c');
    await eventually('the three hold every write', async () => (await converged([a, b, c])) && Object.keys(await entries(a)).length === 7, 30_000);
    expect(await entries(c)).toEqual({ a0: 'from-a', b0: 'from-b', c0: 'from-c', __migrated: '1.0.0->2.0.0', a1: 'after-a', b1: 'after-b', c1: 'after-c' });
    // (upgrade_pending is re-evaluated as deltas arrive: after these writes it is gone)
    let last: unknown;
    await eventually('C has no upgrade or application reason left', async () => {
      last = (await syncOf(c)).reasons;
      return !(last as { reason: string }[]).some((r) => r.reason === 'upgrade_pending' || r.reason.includes('application'));
    }).catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(last)}`);
    });
  });
});
