/**
 * Conformance: the upgrade and migration routes through the SDK, each answer checked against the
 * node's OpenAPI document. A namespace pinned to 1.0.0 of the kv test app holds a context whose
 * migration to 2.0.0 refuses (the key `block`), so retry and abort have something to act on.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Client } from '../../src/client/index.ts';
import { makeBundle, signingKey } from '../helpers/bundles.ts';
import { startConformanceNode, type Conformance } from '../helpers/conformance.ts';
import type { TestNode } from '../helpers/node.ts';
import { buildTestApp } from '../helpers/wasm-apps.ts';

let node: TestNode;
let conformance: Conformance;
let c: Client;
let setup: Client;

beforeAll(async () => {
  ({ node, conformance, client: c, setup } = await startConformanceNode());
}, 120_000);
afterAll(() => node.destroy());

it('answers every upgrade and migration route as documented', { timeout: 120_000 }, async () => {
  const key = signingKey();
  const v1 = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.upg-conformance', version: '1.0.0', key });
  const v2 = await makeBundle({ wasm: await buildTestApp('kv_v2'), package: 'com.hearth.upg-conformance', version: '2.0.0', key });
  const appId = (await setup.applications.installDev(v1.path)).applicationId;
  await setup.applications.installDev(v2.path);
  const v1Blob = (await setup.applications.versions(appId)).find((v) => v.version === '1.0.0')!.blobId;
  const ns = (await setup.namespaces.create({ applicationId: appId, appKey: v1Blob })).namespaceId;
  const ctx = (await setup.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
  await setup.rpc.execute(ctx, 'set', { key: 'block', value: 'yes' });

  expect(await c.upgrades.status(ns)).toBeNull();
  expect(await c.upgrades.upgrade(ns, { targetApplicationId: appId, cascade: true })).toMatchObject({ groupId: ns, status: 'in_progress' });
  const failed = async () => {
    for (let i = 0; i < 400; i++) {
      const s = await c.upgrades.status(ns);
      if (s?.localContextsFailed === 1) return s;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the migration never failed');
  };
  expect(await failed()).toMatchObject({ status: 'in_progress', fromVersion: '1.0.0', toVersion: '2.0.0' });
  expect((await c.upgrades.migrationStatus(ns)).rollup.failed).toBe(1);
  expect(await c.upgrades.cascadeStatus(ns)).toEqual([expect.objectContaining({ groupId: ns, cascadeHlc: expect.any(String) })]);
  expect((await c.upgrades.retry(ns)).groupId).toBe(ns);
  await failed();
  expect(await c.upgrades.abort(ns)).toEqual({ namespaceId: ns, aborted: true });

  conformance.assertAreaCovered('upgrades');
});
