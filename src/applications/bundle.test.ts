import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signingKey, testAbi, tinyWasm } from '../../test/helpers/bundles.ts';
import { readArchive, writeArchive } from './archive.ts';
import { buildBundle, verifyBundle } from './bundle.ts';
import { applicationIdOf, signManifest } from './signing.ts';
import { embeddedAbi } from './wasm.ts';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

async function rebuild(bytes: Uint8Array, change: (files: Map<string, Buffer>) => void | Array<[string, Uint8Array]>): Promise<Buffer> {
  const files = await readArchive(bytes);
  const replaced = change(files);
  return writeArchive(replaced ?? [...files.entries()]);
}

/** A bundle whose manifest is exactly `manifest` (signed), with `files` beside it. */
async function handMade(manifest: Record<string, unknown>, files: Array<[string, Uint8Array]>) {
  const signed = signManifest(manifest, signingKey());
  return writeArchive([['manifest.json', Buffer.from(JSON.stringify(signed))], ...files]);
}

const wasmEntry = (path: string, bytes: Uint8Array) => ({ path, hash: sha(bytes), size: bytes.length });
const base = { version: '1.0', package: 'com.example.hand', appVersion: '0.1.0', minRuntimeVersion: '0.1.0' };

describe('buildBundle → verifyBundle', () => {
  it('round-trips a single-service bundle with its id, metadata and embedded ABI', async () => {
    const key = signingKey();
    const built = await buildBundle({ package: 'com.example.kv', version: '1.2.3', key, wasm: tinyWasm(), abi: testAbi(), name: 'KV' });
    const v = await verifyBundle(built.bytes);
    expect(v.applicationId).toBe(applicationIdOf('com.example.kv', built.signerId));
    expect(v.applicationId).toBe(built.applicationId);
    expect(v.manifest).toMatchObject({ package: 'com.example.kv', appVersion: '1.2.3', metadata: { name: 'KV' } });
    expect(v.services).toEqual([]);
    const wasm = v.wasms.get('')!;
    expect(WebAssembly.validate(new Uint8Array(wasm))).toBe(true);
    expect(embeddedAbi(wasm)).toEqual(testAbi());
    const files = await readArchive(built.bytes);
    expect([...files.keys()].sort()).toEqual(['abi.json', 'app.wasm', 'manifest.json']);
  });

  it('keeps an ABI the wasm already embeds, and can skip embedding', async () => {
    const own = testAbi(['own'], []);
    const kept = await verifyBundle((await buildBundle({ package: 'p.a', version: '1.0.0', key: signingKey(), wasm: tinyWasm({ abi: own }), abi: testAbi() })).bytes);
    expect(embeddedAbi(kept.wasms.get('')!)).toEqual(own);
    const plain = await verifyBundle((await buildBundle({ package: 'p.a', version: '1.0.0', key: signingKey(), wasm: tinyWasm(), abi: testAbi(), embedAbi: false })).bytes);
    expect(embeddedAbi(plain.wasms.get('')!)).toBeNull();
  });

  it('builds the multi-service form, each service digest-checked', async () => {
    const built = await buildBundle({
      package: 'com.example.multi',
      version: '2.0.0',
      key: signingKey(),
      services: [
        { name: 'alpha', wasm: tinyWasm({ extra: 1 }), abi: testAbi(['a']) },
        { name: 'beta', wasm: tinyWasm({ extra: 2 }) },
      ],
    });
    const v = await verifyBundle(built.bytes);
    expect(v.services).toEqual(['alpha', 'beta']);
    expect(embeddedAbi(v.wasms.get('alpha')!)?.methods).toEqual([{ name: 'a', params: [] }]);
    expect(embeddedAbi(v.wasms.get('beta')!)).toBeNull();
  });

  it('is deterministic for the same inputs and signing time', async () => {
    const key = signingKey();
    const at = new Date('2026-01-01T00:00:00Z');
    const a = await buildBundle({ package: 'p.d', version: '1.0.0', key, wasm: tinyWasm(), signedAt: at });
    const b = await buildBundle({ package: 'p.d', version: '1.0.0', key, wasm: tinyWasm(), signedAt: at });
    expect(sha(a.bytes)).toBe(sha(b.bytes));
  });
});

describe('verifyBundle refusals', () => {
  it('refuses a manifest changed after signing', async () => {
    const built = await buildBundle({ package: 'p.t', version: '1.0.0', key: signingKey(), wasm: tinyWasm(), name: 'Original' });
    const tampered = await rebuild(built.bytes, (files) => {
      const m = JSON.parse(files.get('manifest.json')!.toString());
      m.metadata.name = 'Evil';
      files.set('manifest.json', Buffer.from(JSON.stringify(m)));
    });
    await expect(verifyBundle(tampered)).rejects.toThrow(/signature does not verify/);
  });

  it('refuses a wasm whose SHA-256 differs from the manifest', async () => {
    const built = await buildBundle({ package: 'p.t', version: '1.0.0', key: signingKey(), wasm: tinyWasm() });
    const swapped = await rebuild(built.bytes, (files) => void files.set('app.wasm', Buffer.from(tinyWasm({ extra: 9 }))));
    await expect(verifyBundle(swapped)).rejects.toThrow(/has SHA-256 [0-9a-f]{64}, but the manifest declares/);
  });

  it('refuses a declared wasm missing from the archive', async () => {
    const built = await buildBundle({ package: 'p.t', version: '1.0.0', key: signingKey(), wasm: tinyWasm() });
    const missing = await rebuild(built.bytes, (files) => [...files.entries()].filter(([n]) => n !== 'app.wasm'));
    await expect(verifyBundle(missing)).rejects.toThrow(/missing from the archive/);
  });

  it('refuses unsafe artifact paths and unsafe package names', async () => {
    const w = tinyWasm();
    for (const path of ['../app.wasm', '/abs/app.wasm', 'a\\b.wasm', 'C:app.wasm', 'x/../../app.wasm']) {
      const bytes = await handMade({ ...base, wasm: wasmEntry(path, w) }, [['app.wasm', w]]);
      await expect(verifyBundle(bytes), path).rejects.toThrow(/not a safe relative path/);
    }
    for (const pkg of ['a/b', '..', 'a\\b', '']) {
      const bytes = await handMade({ ...base, package: pkg, wasm: wasmEntry('app.wasm', w) }, [['app.wasm', w]]);
      await expect(verifyBundle(bytes), pkg).rejects.toThrow(/package/);
    }
  });

  it('accepts a nested artifact path and a leading ./', async () => {
    const w = tinyWasm();
    const bytes = await handMade({ ...base, wasm: wasmEntry('./lib/app.wasm', w) }, [['lib/app.wasm', w]]);
    expect((await verifyBundle(bytes)).wasms.get('')).toEqual(Buffer.from(w));
  });

  it('refuses a bundle needing a newer runtime', async () => {
    const built = await buildBundle({ package: 'p.t', version: '1.0.0', key: signingKey(), wasm: tinyWasm(), minRuntimeVersion: '0.12.0' });
    await expect(verifyBundle(built.bytes)).rejects.toThrow(/needs runtime 0\.12\.0 or newer; this node provides 0\.11\.0-rc\.83/);
    expect((await verifyBundle(built.bytes, { runtimeVersion: '0.12.0' })).manifest.minRuntimeVersion).toBe('0.12.0');
  });

  it('refuses a manifest that declares no wasm', async () => {
    const bytes = await handMade({ ...base }, []);
    await expect(verifyBundle(bytes)).rejects.toThrow(/declares no wasm/);
  });

  it('refuses a second top-level manifest, and counts only a top-level one', async () => {
    const built = await buildBundle({ package: 'p.t', version: '1.0.0', key: signingKey(), wasm: tinyWasm() });
    const twice = await rebuild(built.bytes, (files) => [...files.entries(), ['./manifest.json', files.get('manifest.json')!]]);
    await expect(verifyBundle(twice)).rejects.toThrow(/more than one manifest\.json/);
    const nested = await rebuild(built.bytes, (files) => [...files.entries()].map(([n, b]) => [n === 'manifest.json' ? 'x/manifest.json' : n, b]));
    await expect(verifyBundle(nested)).rejects.toThrow(/no top-level manifest\.json/);
  });

  it('refuses an oversized manifest, a non-gzip file and a truncated archive', async () => {
    const built = await buildBundle({ package: 'p.t', version: '1.0.0', key: signingKey(), wasm: tinyWasm() });
    await expect(verifyBundle(built.bytes, { maxManifestBytes: 64 })).rejects.toThrow(/above the 64-byte limit/);
    await expect(verifyBundle(Buffer.from('plain text'))).rejects.toThrow(/not a signed application bundle \(\.mpk\): the file is not a gzip archive/);
    // a raw wasm is told how to become a bundle (issue #34 §2)
    await expect(verifyBundle(tinyWasm())).rejects.toThrow(
      'not a signed application bundle (.mpk): this is a raw WebAssembly module; bundle it first: hearth app bundle --wasm <file> --package <name> --version <semver> --key <signing key>',
    );
    await expect(verifyBundle(built.bytes.subarray(0, built.bytes.length - 20))).rejects.toThrow(/unreadable/);
  });

  it('refuses an archive above the decompressed cap', async () => {
    const built = await buildBundle({ package: 'p.t', version: '1.0.0', key: signingKey(), wasm: tinyWasm() });
    await expect(verifyBundle(built.bytes, { maxTotalBytes: 1024 })).rejects.toMatchObject({ kind: 'payload_too_large' });
  });

  it('refuses an unsigned manifest', async () => {
    const w = tinyWasm();
    const bytes = await writeArchive([['manifest.json', Buffer.from(JSON.stringify({ ...base, signerId: 'did:key:zX', wasm: wasmEntry('app.wasm', w) }))], ['app.wasm', w]]);
    await expect(verifyBundle(bytes)).rejects.toThrow(/not signed/);
  });
});
