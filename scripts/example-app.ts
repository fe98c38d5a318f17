/**
 * Builds the example application of the quick start (`npm run example:app`): the key-value store
 * written in AssemblyScript under test/apps/kv.ts, compiled to `build/example/kv.wasm` with its
 * ABI embedded. Bundle, sign and install it with `hearth app keygen|bundle|install-dev`
 * (docs/quick-start.md).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { buildTestApp } from '../test/helpers/wasm-apps.ts';

const dir = new URL('../build/example/', import.meta.url);
await mkdir(dir, { recursive: true });
const wasm = await buildTestApp('kv');
await writeFile(new URL('kv.wasm', dir), wasm);
process.stdout.write(`wrote ${new URL('kv.wasm', dir).pathname} (${wasm.length} bytes)\n`);
