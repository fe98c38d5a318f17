/**
 * Builds the example application of the quick start (`npm run example:app`): the key-value store
 * written in AssemblyScript under test/apps/kv.ts, compiled to `build/example/kv.wasm` with its
 * ABI embedded, and that wasm bundled and signed as `build/example/kv.mpk` (com.example.kv 1.0.0),
 * the file a node installs (`hearth app install-dev`, or picked in the dashboard). A node never
 * installs a raw wasm (issue #34 §2), so the script hands over the bundle. The signing key is a
 * development key kept beside it (`build/example/dev-signing.pem`, 0600, made once and reused, so
 * a rebuilt bundle keeps its signer); sign your own wasm with `hearth app keygen|bundle`
 * (docs/quick-start.md).
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { buildBundle } from '../src/applications/bundle.ts';
import { loadSigningKey } from '../src/applications/signing.ts';
import { buildTestApp } from '../test/helpers/wasm-apps.ts';

const dir = new URL('../build/example/', import.meta.url);
await mkdir(dir, { recursive: true });
const wasm = await buildTestApp('kv');
const wasmPath = fileURLToPath(new URL('kv.wasm', dir));
await writeFile(wasmPath, wasm);
process.stdout.write(`wrote ${wasmPath} (${wasm.length} bytes)\n`);

const keyPath = fileURLToPath(new URL('dev-signing.pem', dir));
let pem: Buffer;
try {
  pem = await readFile(keyPath);
} catch (err) {
  if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  pem = Buffer.from(generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }));
  await writeFile(keyPath, pem, { mode: 0o600, flag: 'wx' });
}
const built = await buildBundle({ package: 'com.example.kv', version: '1.0.0', key: loadSigningKey(pem), wasm, name: 'Example key-value store' });
const bundlePath = fileURLToPath(new URL('kv.mpk', dir));
await writeFile(bundlePath, built.bytes);
process.stdout.write(`wrote ${bundlePath} (${built.bytes.length} bytes, signed with ${keyPath})\napplication id: ${built.applicationId}\ninstall it: hearth app install-dev ${bundlePath}\n`);
