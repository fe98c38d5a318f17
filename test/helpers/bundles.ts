/**
 * Test bundles, made by the same code as `hearth app bundle` (src/applications/bundle.ts), so the
 * node is tested against what its own tooling produces. Also a tiny hand-assembled wasm module
 * (a `memory` export and, optionally, a `calimero_abi_v1` section) for tests that need no code.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBundle, type BuildServiceInput } from '../../src/applications/bundle.ts';
import { ABI_SECTION } from '../../src/applications/constants.ts';
import { appendCustomSection } from '../../src/applications/wasm.ts';

/** A minimal valid module: one memory (1 page) exported as `memory`; optionally an embedded ABI. */
export function tinyWasm(opts: { abi?: object; extra?: number } = {}): Uint8Array {
  const header = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  const memory = [0x05, 0x03, 0x01, 0x00, 0x01]; // memory section: 1 memory, min 1 page
  const exportSection = [0x07, 0x0a, 0x01, 0x06, ...Buffer.from('memory'), 0x02, 0x00]; // export "memory" (mem 0)
  let wasm: Uint8Array = Uint8Array.from([...header, ...memory, ...exportSection]);
  // a distinct custom section makes otherwise identical modules differ (distinct blobs)
  if (opts.extra !== undefined) wasm = appendCustomSection(wasm, 'hearth_test', Buffer.from(String(opts.extra)));
  if (opts.abi) wasm = appendCustomSection(wasm, ABI_SECTION, Buffer.from(JSON.stringify(opts.abi)));
  return wasm;
}

/** A `wasm-abi/1` ABI with the given methods; `readOnly` ones carry `"intent": "read_only"`. */
export function testAbi(methods: string[] = ['get', 'set'], readOnly: string[] = ['get']): object {
  return {
    schema_version: 'wasm-abi/1',
    types: {},
    methods: methods.map((name) => ({ name, params: [], ...(readOnly.includes(name) ? { intent: 'read_only' } : {}) })),
    events: [],
  };
}

export function signingKey(): KeyObject {
  return generateKeyPairSync('ed25519').privateKey;
}

export interface MakeBundleOptions {
  wasm: Uint8Array;
  /** the ABI; embedded into the wasm (as `hearth app bundle` does) and shipped as abi.json */
  abi?: object;
  package?: string;
  version?: string;
  key?: KeyObject;
  /** directory to write into (default: a fresh temporary one) */
  dir?: string;
  /** file name (default `<package>-<version>.mpk`) */
  fileName?: string;
  services?: BuildServiceInput[];
  name?: string;
  minRuntimeVersion?: string;
  /** extra manifest fields, signed along */
  extra?: Record<string, unknown>;
}

export interface MadeBundle {
  path: string;
  bytes: Buffer;
  applicationId: string;
  signerId: string;
  package: string;
  version: string;
  key: KeyObject;
  manifest: Record<string, unknown>;
}

export async function makeBundle(opts: MakeBundleOptions): Promise<MadeBundle> {
  const pkg = opts.package ?? 'com.hearth.test';
  const version = opts.version ?? '1.0.0';
  const key = opts.key ?? signingKey();
  const built = await buildBundle({
    package: pkg,
    version,
    key,
    wasm: opts.wasm,
    abi: opts.abi,
    services: opts.services,
    name: opts.name,
    minRuntimeVersion: opts.minRuntimeVersion,
    extra: opts.extra,
  });
  const dir = opts.dir ?? (await mkdtemp(join(tmpdir(), 'hearth-bundle-')));
  const path = join(dir, opts.fileName ?? `${pkg}-${version}.mpk`);
  await writeFile(path, built.bytes);
  return { path, bytes: built.bytes, applicationId: built.applicationId, signerId: built.signerId, package: pkg, version, key, manifest: built.manifest };
}
