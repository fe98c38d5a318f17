/**
 * An upgrade op applied on a node that does not have the target version (as when it arrives from
 * another node): the context fails with `no_migration_path`, keeps its version, and migrates by
 * itself once that version is installed — a plain member node may not call retry.
 */
import { describe, expect, it } from 'vitest';
import type { InstalledRelease } from '../applications/catalog.ts';
import { APP_ID, FakeCatalog, world } from '../contexts/testkit.ts';
import { registerUpgradeOps } from './ops.ts';
import { UpgradeService } from './service.ts';
import { UPGRADE_OPS } from './types.ts';

const V1 = 'cd'.repeat(32); // FakeCatalog's installed bundle
const V2 = 'ef'.repeat(32);
const release = (bundleBlobId: string, version: string): InstalledRelease => ({ applicationId: APP_ID, package: 'kv', signerId: 'did:key:z', version, bundleBlobId, services: [] });

/** FakeCatalog with versions: 1.0.0 installed, others as the test installs them. */
class VersionedCatalog extends FakeCatalog {
  readonly installed = new Map([[V1, release(V1, '1.0.0')]]);
  async installedRelease(bundleBlobId: string) {
    return this.installed.get(bundleBlobId) ?? null;
  }
  async releases() {
    return [...this.installed.values()].reverse();
  }
  async abiOfVersion() {
    return null;
  }
}

describe('an upgrade to a version this node lacks', () => {
  it('records the failure with the missing bundle, and resumes once that bundle is installed', async () => {
    const w = await world([registerUpgradeOps]);
    const catalog = new VersionedCatalog();
    const errors: unknown[] = [];
    const upgrades = new UpgradeService({ ...w, contexts: w, applications: catalog, clock: { now: () => 1_700_000_000_000 }, onError: (e) => void errors.push(e) });
    const { contextId } = await w.contexts.create({ groupId: w.namespaceId, applicationId: APP_ID, initializationParams: new Uint8Array() });
    await w.records.meta.put(contextId, { ...(await w.records.getMeta(contextId))!, bundleBlobId: V1 });
    await upgrades.start();
    try {
      // the op as it arrives from the node that asked for the upgrade (it had 2.0.0)
      const body = { groupIds: [w.namespaceId], targetApplicationId: APP_ID, fromVersion: '1.0.0', toVersion: '2.0.0', fromAppKey: V1, toAppKey: V2, toStateVersion: 0, cascade: false };
      await w.governance.submit(w.namespaceId, w.namespaceId, UPGRADE_OPS.set, body);
      await upgrades.migrator.idle();
      expect(await upgrades.status(w.namespaceId)).toMatchObject({ status: 'in_progress', localContextsTotal: 1, localContextsSwapped: 0, localContextsFailed: 1 });
      const failure = await upgrades.progress.failure(w.governance.namespace(w.namespaceId)!.groups[w.namespaceId]!.upgrade!.id, contextId);
      expect(failure).toMatchObject({ reason: 'no_migration_path', awaitsBundle: V2, message: expect.stringContaining('not installed on this node') });
      expect((await w.records.getMeta(contextId))!.bundleBlobId).toBe(V1);

      await upgrades.bundleInstalled('77'.repeat(32)); // another bundle: nothing to resume
      await upgrades.migrator.idle();
      expect((await upgrades.status(w.namespaceId))!.localContextsFailed).toBe(1);

      catalog.installed.set(V2, release(V2, '2.0.0'));
      await upgrades.bundleInstalled(V2);
      await upgrades.migrator.idle();
      expect(await upgrades.status(w.namespaceId)).toMatchObject({ status: 'completed', toVersion: '2.0.0' });
      expect((await w.records.getMeta(contextId))!.bundleBlobId).toBe(V2);
      expect(errors).toEqual([]);
    } finally {
      await upgrades.stop();
    }
  });
});

