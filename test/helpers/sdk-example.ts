/**
 * The SDK's documented first program (docs/sdk.md "A first program", issue #32 §1): read from the
 * docs as written, bundled for the browser as an application would bundle it, and a context on a
 * node whose state keeps changing so the program has an event to receive. Used by
 * test/browser/sdk-package.test.ts (sources, Chromium) and scripts/release-check.ts (the installed
 * `hearth-sdk` tarball, each Node.js line).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import type { Client } from '../../src/client/index.ts';
import { makeBundle } from './bundles.ts';
import { ROOT } from './node.ts';
import { buildTestApp } from './wasm-apps.ts';

export const EXAMPLE_HEADING = '## A first program';

/** The first ```ts block under the heading in docs/sdk.md. */
export async function sdkExampleSource(): Promise<string> {
  const text = await readFile(join(ROOT, 'docs/sdk.md'), 'utf8');
  const at = text.indexOf(`\n${EXAMPLE_HEADING}\n`);
  if (at < 0) throw new Error(`docs/sdk.md has no "${EXAMPLE_HEADING}" section`);
  const block = /```ts\n([\s\S]*?)\n```/.exec(text.slice(at));
  if (!block) throw new Error(`docs/sdk.md "${EXAMPLE_HEADING}" has no ts block`);
  return block[1]!;
}

export interface BrowserBundle {
  code: string;
  bytes: number;
  gzipBytes: number;
}

/**
 * The example bundled with esbuild for the browser (minified, one script; its exports on
 * `globalThis[globalName]`). `hearth-sdk` resolves from `resolveDir`'s node_modules, or to `sdkEntry`.
 */
export async function bundleExample(opts: { resolveDir: string; sdkEntry?: string; globalName?: string }): Promise<BrowserBundle> {
  const out = await build({
    stdin: { contents: await sdkExampleSource(), loader: 'ts', resolveDir: opts.resolveDir, sourcefile: 'first-program.ts' },
    bundle: true,
    minify: true,
    platform: 'browser',
    format: 'iife',
    globalName: opts.globalName ?? 'FirstProgram',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
    ...(opts.sdkEntry ? { alias: { 'hearth-sdk': opts.sdkEntry } } : {}),
  });
  const code = out.outputFiles[0]!.text;
  return { code, bytes: Buffer.byteLength(code), gzipBytes: gzipSync(code, { level: 9 }).length };
}

export interface KvContext {
  applicationId: string;
  namespaceId: string;
  contextId: string;
  /** the bundle file (install it on another node of this machine with `installDev`) */
  bundlePath: string;
}

/** Installs the kv_store test application on the node, creates a namespace and a context of it. */
export async function kvContext(client: Client, bundleDir?: string): Promise<KvContext> {
  const bundle = await makeBundle({ wasm: await buildTestApp('kv_store'), package: 'com.hearth.example.kv', ...(bundleDir ? { dir: bundleDir } : {}) });
  const { applicationId } = await client.applications.installDev(bundle.path);
  const { namespaceId } = await client.namespaces.create({ applicationId });
  const { contextId } = await client.contexts.create({ groupId: namespaceId, initializationParams: [] });
  return { applicationId, namespaceId, contextId, bundlePath: bundle.path };
}

/** Writes to the context every 200 ms until `until` settles (the reader subscribes at its own pace). */
export async function keepWriting(client: Client, contextId: string, until: Promise<unknown>, signal: AbortSignal): Promise<void> {
  let done = false;
  void until.finally(() => (done = true)).catch(() => {});
  for (let i = 0; !done && !signal.aborted; i++) {
    await client.rpc.execute(contextId, 'set', { key: `k${i}`, value: `v${i}` });
    await new Promise((r) => setTimeout(r, 200));
  }
}
