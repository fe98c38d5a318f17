import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeBundle, signingKey, testAbi, tinyWasm } from '../../test/helpers/bundles.ts';
import { BlobStore } from '../blobs/store.ts';
import { MemoryStore } from '../store/memory.ts';
import { ApplicationRegistry, DirectoryRegistry, publishToDirectory } from './registry.ts';
import { ApplicationService, selectService } from './service.ts';

let dir: string;
let kv: MemoryStore;
let blobs: BlobStore;

function service(opts: { devInstallRoot?: string; registryDir?: string } = {}) {
  const sources = opts.registryDir ? [new DirectoryRegistry(opts.registryDir)] : [];
  return new ApplicationService({
    store: kv,
    blobs,
    registry: new ApplicationRegistry({ sources, timeoutMs: 5_000 }),
    devInstallRoot: opts.devInstallRoot,
    now: () => 1_700_000_000_000,
  });
}

async function refcount(blobId: string): Promise<number> {
  return (await blobs.get(blobId))?.refcount ?? 0;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-apps-'));
  kv = new MemoryStore();
  await kv.open();
  blobs = new BlobStore(kv, join(dir, 'blobs'));
  await blobs.open();
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

describe('answers without waiting (a method call\'s lookups, issue #33)', () => {
  it('knows an application and a version\'s read-only methods once read, and forgets them when the applications change', async () => {
    const apps = service();
    const b = await makeBundle({ wasm: tinyWasm(), abi: testAbi(['get', 'set'], ['get']), dir });
    await apps.installDev(b.path);
    expect(apps.installedNow(b.applicationId)).toBeUndefined(); // not read yet
    expect(apps.installedNow('not an id')).toBe(false);
    const { bundleBlobId } = (await apps.get(b.applicationId))!;
    expect(apps.installedNow(b.applicationId)).toBe(true);
    expect(apps.readOnlyMethodsOfVersionNow(bundleBlobId)).toBeUndefined();
    expect([...(await apps.readOnlyMethodsOfVersion(bundleBlobId))]).toEqual(['get']);
    expect([...apps.readOnlyMethodsOfVersionNow(bundleBlobId)!]).toEqual(['get']);
    expect(apps.readOnlyMethodsOfVersionNow(bundleBlobId, 'other')).toBeUndefined();
    await apps.uninstall(b.applicationId);
    expect(apps.readOnlyMethodsOfVersionNow(bundleBlobId)).toBeUndefined();
    expect(apps.installedNow(b.applicationId)).toBeUndefined();
    expect(await apps.get(b.applicationId)).toBeNull();
    expect(apps.installedNow(b.applicationId)).toBe(false);
  });
});

describe('dev install', () => {
  it('installs a signed bundle, stores it as one blob, and serves its wasm and ABI', async () => {
    const apps = service();
    const b = await makeBundle({ wasm: tinyWasm(), abi: testAbi(['get', 'set'], ['get']), dir });
    expect(await apps.installDev(b.path)).toEqual({ applicationId: b.applicationId });
    const app = (await apps.get(b.applicationId))!;
    expect(app).toMatchObject({ package: 'com.hearth.test', version: '1.0.0', signerId: b.signerId, size: b.bytes.length, services: [], installedAt: 1_700_000_000_000 });
    expect(app.source).toBe(`file://${b.path}`);
    expect(await refcount(app.bundleBlobId)).toBe(1);
    const wasm = await apps.wasm(b.applicationId);
    expect(wasm).toBeInstanceOf(Uint8Array);
    expect(wasm.byteOffset).toBe(0);
    expect(wasm.buffer.byteLength).toBe(wasm.length);
    expect(WebAssembly.validate(new Uint8Array(wasm))).toBe(true);
    expect([...(await apps.readOnlyMethods(b.applicationId))]).toEqual(['get']);
    expect((await apps.abi(b.applicationId))?.schema_version).toBe('wasm-abi/1');
  });

  it('answers null for the ABI of a wasm without one, and 404 for unknown applications', async () => {
    const apps = service();
    const b = await makeBundle({ wasm: tinyWasm(), dir });
    await apps.installDev(b.path);
    expect(await apps.abi(b.applicationId)).toBeNull();
    expect((await apps.readOnlyMethods(b.applicationId)).size).toBe(0);
    await expect(apps.wasm('ab'.repeat(32))).rejects.toMatchObject({ kind: 'not_found' });
    expect(await apps.get('ab'.repeat(32))).toBeNull();
    expect(await apps.get('not an id')).toBeNull();
  });

  it('refuses raw wasm, .. components, missing files and directories with 4xx', async () => {
    const apps = service();
    const wasmPath = join(dir, 'app.wasm');
    await writeFile(wasmPath, tinyWasm());
    await expect(apps.installDev(wasmPath)).rejects.toMatchObject({ kind: 'bad_request', message: expect.stringMatching(/is not a signed application bundle/) });
    await expect(apps.installDev(`${dir}/../x.mpk`)).rejects.toMatchObject({ kind: 'bad_request', message: expect.stringMatching(/"\.\."/) });
    await expect(apps.installDev(join(dir, 'absent.mpk'))).rejects.toMatchObject({ kind: 'not_found', message: `application file not found at ${join(dir, 'absent.mpk')}` });
    await mkdir(join(dir, 'd.mpk'));
    await expect(apps.installDev(join(dir, 'd.mpk'))).rejects.toMatchObject({ kind: 'bad_request' });
    // a .mpk that is really a wasm
    await writeFile(join(dir, 'fake.mpk'), tinyWasm());
    await expect(apps.installDev(join(dir, 'fake.mpk'))).rejects.toThrow(/not a signed application bundle \(\.mpk\)/);
  });

  it('confines dev installs to the install root, also through symlinks', async () => {
    const root = join(dir, 'root');
    await mkdir(root);
    const apps = service({ devInstallRoot: root });
    const inside = await makeBundle({ wasm: tinyWasm(), dir: root });
    const outside = await makeBundle({ wasm: tinyWasm(), dir, package: 'com.outside' });
    await expect(apps.installDev(inside.path)).resolves.toEqual({ applicationId: inside.applicationId });
    await expect(apps.installDev(outside.path)).rejects.toMatchObject({ kind: 'forbidden', message: 'install path is not permitted' });
    await symlink(outside.path, join(root, 'link.mpk'));
    await expect(apps.installDev(join(root, 'link.mpk'))).rejects.toMatchObject({ kind: 'forbidden' });
    // outside the root, even a missing file is 403 (existence is not revealed)
    await expect(apps.installDev(join(dir, 'nope.mpk'))).rejects.toMatchObject({ kind: 'forbidden' });
  });
});

describe('versions, reinstall and uninstall', () => {
  it('keeps every installed version, shows the last one, and holds one blob reference per version', async () => {
    const apps = service();
    const key = signingKey();
    const v1 = await makeBundle({ wasm: tinyWasm({ extra: 1 }), key, version: '1.0.0', dir });
    const v2 = await makeBundle({ wasm: tinyWasm({ extra: 2 }), key, version: '1.1.0', dir });
    await apps.installDev(v2.path);
    await apps.installDev(v1.path);
    await apps.installDev(v1.path); // a reinstall of the same bytes
    expect(v1.applicationId).toBe(v2.applicationId);
    const app = (await apps.get(v1.applicationId))!;
    expect(app.version).toBe('1.0.0'); // the last installed, as the reference's row
    const versions = await apps.versions(v1.applicationId);
    expect(versions.map((v) => v.version)).toEqual(['1.1.0', '1.0.0']);
    expect(versions[1]).toEqual({ version: '1.0.0', blobId: app.bundleBlobId, size: v1.bytes.length, package: 'com.hearth.test' });
    expect(await refcount(versions[0].blobId)).toBe(1);
    expect(await refcount(versions[1].blobId)).toBe(1);
    // each retained version's wasm stays loadable by its bundle blob id
    expect(Buffer.from(await apps.wasmOfVersion(versions[0].blobId))).toEqual(Buffer.from(tinyWasm({ extra: 2 })));
    expect(Buffer.from(await apps.wasmOfVersion(versions[1].blobId))).toEqual(Buffer.from(tinyWasm({ extra: 1 })));
    expect(await apps.packages()).toEqual(['com.hearth.test']);
    expect(await apps.packageVersions('com.hearth.test')).toEqual(['1.1.0', '1.0.0']);
    expect(await apps.latest('com.hearth.test')).toEqual({ applicationId: v1.applicationId, version: '1.1.0' });
    expect(await apps.latest('com.unknown')).toEqual({ applicationId: null, version: null });
    expect(await apps.isPinned(versions[0].blobId)).toBe(true);

    expect(await apps.uninstall(v1.applicationId)).toEqual({ applicationId: v1.applicationId });
    expect(await apps.get(v1.applicationId)).toBeNull();
    expect(await blobs.get(versions[0].blobId)).toBeUndefined();
    expect(await blobs.get(versions[1].blobId)).toBeUndefined();
    expect(await apps.isPinned(versions[0].blobId)).toBe(false);
    // idempotent
    expect(await apps.uninstall(v1.applicationId)).toEqual({ applicationId: v1.applicationId });
    await expect(apps.versions(v1.applicationId)).rejects.toMatchObject({ kind: 'not_found' });
    await expect(apps.wasmOfVersion(versions[0].blobId)).rejects.toMatchObject({ kind: 'not_found' });
  });

  it('tells its install listeners of each version once it is durable (migrations waiting for it resume)', async () => {
    const apps = service();
    const key = signingKey();
    const v1 = await makeBundle({ wasm: tinyWasm({ extra: 1 }), key, version: '1.0.0', dir });
    const heard: { version: string; bundleBlobId: string }[] = [];
    const off = apps.onInstalled((r) => void heard.push({ version: r.version, bundleBlobId: r.bundleBlobId }));
    await apps.installDev(v1.path);
    expect(heard).toEqual([{ version: '1.0.0', bundleBlobId: (await apps.get(v1.applicationId))!.bundleBlobId }]);
    expect(await apps.installedRelease(heard[0].bundleBlobId)).toMatchObject({ applicationId: v1.applicationId, version: '1.0.0' });
    await expect(apps.installDev(join(dir, 'missing.mpk'))).rejects.toMatchObject({ kind: 'not_found' });
    off();
    await apps.installDev((await makeBundle({ wasm: tinyWasm({ extra: 2 }), key, version: '2.0.0', dir })).path);
    expect(heard).toHaveLength(1); // a failed install tells nobody; a removed listener hears nothing
  });

  it('releases the blob a re-signed version replaced', async () => {
    const apps = service();
    const key = signingKey();
    const first = await makeBundle({ wasm: tinyWasm({ extra: 1 }), key, dir, fileName: 'a.mpk' });
    const second = await makeBundle({ wasm: tinyWasm({ extra: 2 }), key, dir, fileName: 'b.mpk' });
    await apps.installDev(first.path);
    const firstBlob = (await apps.get(first.applicationId))!.bundleBlobId;
    await apps.installDev(second.path);
    expect(await blobs.get(firstBlob)).toBeUndefined();
    expect(await apps.versions(first.applicationId)).toHaveLength(1);
  });

  it('accepts base58 ids on input and answers hex', async () => {
    const apps = service();
    const b = await makeBundle({ wasm: tinyWasm(), dir });
    await apps.installDev(b.path);
    const { base58Encode } = await import('./signing.ts');
    const b58 = base58Encode(Buffer.from(b.applicationId, 'hex'));
    expect((await apps.require(b58)).id).toBe(b.applicationId);
    await expect(apps.require('xyz')).rejects.toMatchObject({ kind: 'bad_request' });
  });
});

describe('multi-service bundles', () => {
  it('stores each service wasm as its own blob and selects services like the reference', async () => {
    const apps = service();
    const b = await makeBundle({
      wasm: tinyWasm(),
      dir,
      services: [
        { name: 'alpha', wasm: tinyWasm({ extra: 1 }), abi: testAbi(['a'], ['a']) },
        { name: 'beta', wasm: tinyWasm({ extra: 2 }) },
      ],
    });
    await apps.installDev(b.path);
    const app = await apps.require(b.applicationId);
    expect(app.services).toEqual(['alpha', 'beta']);
    expect(await refcount(app.serviceBlobs.alpha)).toBe(1);
    expect([...(await apps.readOnlyMethods(b.applicationId, 'alpha'))]).toEqual(['a']);
    expect(await apps.abi(b.applicationId, 'beta')).toBeNull();
    await expect(apps.abi(b.applicationId)).rejects.toThrow(/multiple services; pass service_name \(available: alpha, beta\)/);
    await expect(apps.wasm(b.applicationId, 'gamma')).rejects.toThrow(/service_name "gamma"/);
  });

  it('selectService: the rules of admin-wire-a §3.4', () => {
    expect(selectService([], undefined)).toBe('');
    expect(() => selectService([], 'x')).toThrow('application has no named services; omit service_name');
    expect(selectService(['only'], undefined)).toBe('only');
    expect(selectService(['a', 'b'], 'b')).toBe('b');
    expect(() => selectService(['a', 'b'], undefined)).toThrow(/service_name/);
  });
});

describe('registry installs', () => {
  it('installs from a registry directory and maps a missing package to 502', async () => {
    const registryDir = join(dir, 'registry');
    const b = await makeBundle({ wasm: tinyWasm(), dir, version: '3.0.0' });
    const published = await publishToDirectory(registryDir, b.bytes);
    expect(published).toMatchObject({ package: 'com.hearth.test', version: '3.0.0', applicationId: b.applicationId, written: true });
    const apps = service({ registryDir });
    expect(await apps.installFromRegistry('com.hearth.test', '3.0.0')).toEqual({ applicationId: b.applicationId });
    expect((await apps.get(b.applicationId))!.source).toBe(`file://${published.path}`);
    await expect(apps.installFromRegistry('com.hearth.test', '9.9.9')).rejects.toMatchObject({ kind: 'bad_gateway' });
    await expect(apps.installFromRegistry('../etc', '1.0.0')).rejects.toMatchObject({ kind: 'bad_request' });
  });

  it('is a 400 when no registry is configured', async () => {
    await expect(service().installFromRegistry('a.b', '1.0.0')).rejects.toMatchObject({ kind: 'bad_request', message: expect.stringMatching(/No application registry is configured/) });
  });

  it('publishes a version once; other bytes for it are a conflict unless forced', async () => {
    const registryDir = join(dir, 'registry');
    const key = signingKey();
    const a = await makeBundle({ wasm: tinyWasm({ extra: 1 }), key, dir, fileName: 'a.mpk' });
    const b = await makeBundle({ wasm: tinyWasm({ extra: 2 }), key, dir, fileName: 'b.mpk' });
    await publishToDirectory(registryDir, a.bytes);
    expect((await publishToDirectory(registryDir, a.bytes)).written).toBe(false);
    await expect(publishToDirectory(registryDir, b.bytes)).rejects.toMatchObject({ kind: 'conflict' });
    expect((await publishToDirectory(registryDir, b.bytes, { force: true })).written).toBe(true);
  });
});

describe('atomic installs (issue #17 finding 10)', () => {
  /** A store that "crashes" at the first batch touching `space`: that batch and every later write fail. */
  function crashAt(space: string): () => boolean {
    let dead = false;
    const batch = kv.batch.bind(kv);
    kv.batch = async (ops) => {
      if (dead || ops.some((op) => op.space === space)) {
        dead = true;
        throw new Error('crash: the process died here');
      }
      return batch(ops);
    };
    return () => dead;
  }

  it('a crash while writing the application row leaves neither the row nor blob references', async () => {
    const apps = service();
    const b = await makeBundle({ wasm: tinyWasm(), services: [{ name: 'a', wasm: tinyWasm({ extra: 1 }) }, { name: 'b', wasm: tinyWasm({ extra: 2 }) }], dir });
    const crashed = crashAt('applications');
    await expect(apps.installDev(b.path)).rejects.toThrow(/crash/);
    expect(crashed()).toBe(true);
    expect(await apps.list()).toEqual([]);
    // nothing references a blob that no row names: the store holds no blob at all
    const left: string[] = [];
    for await (const [id] of blobs.list()) left.push(id);
    expect(left).toEqual([]);
  });

  it('a crash during uninstall keeps the row and its references together', async () => {
    const apps = service();
    const b = await makeBundle({ wasm: tinyWasm(), dir });
    await apps.installDev(b.path);
    const blobId = (await apps.get(b.applicationId))!.bundleBlobId;
    crashAt('blobs');
    await expect(apps.uninstall(b.applicationId)).rejects.toThrow(/crash/);
    expect(await apps.get(b.applicationId)).not.toBeNull();
    expect(await refcount(blobId)).toBe(1);
  });
});
