/**
 * The SDK's own package (issue #32 §1): compiles `src/client/` (and what it shares with the node:
 * `src/codec/json.ts`, the wire vocabulary `src/wire/` and `src/abort.ts`) into `packages/client/dist/`, where `packages/client/package.json`
 * (`hearth-sdk`) publishes it. The sources stay where the node's build, tests and docs use them;
 * this only reads them. `npm pack` in `packages/client/` (or `npm pack --workspaces` at the root)
 * runs it as `prepack`.
 *
 * - `dist/esm/` — tsc: one ES module (+ `.d.ts`) per source file, the tree of `src/` kept
 *   (`esm/client/index.js` imports `esm/codec/json.js`), so bundlers can drop what an application
 *   does not use.
 * - `dist/cjs/` — the same entry bundled by esbuild into one CommonJS file, and the same
 *   declarations beside it; a `package.json` there says `"type": "commonjs"`, so TypeScript reads
 *   those declarations as CommonJS for a `require()` consumer.
 *
 * Checked while building: the compile sees no Node.js types (`types: []`, DOM lib only) and the
 * bundle is made for the browser platform, so a Node-only import fails the build.
 */
import { spawn } from 'node:child_process';
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build as esbuild } from 'esbuild';
import { filesUnder } from './build-web.ts';
import { NOT_SHIPPED, rewriteDeclarations } from './build.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CLIENT_PACKAGE = join(ROOT, 'packages', 'client');
const SRC = join(ROOT, 'src');

/** The SDK's sources: src/client without tests and test helpers, the JSON codec, the wire vocabulary and the abort helper it shares. */
export async function clientSources(): Promise<string[]> {
  const client = (await filesUnder(join(SRC, 'client'))).filter((f) => f.endsWith('.ts') && !NOT_SHIPPED.test(f));
  const wire = (await filesUnder(join(SRC, 'wire'))).filter((f) => f.endsWith('.ts') && !NOT_SHIPPED.test(f));
  return [...client, ...wire, join(SRC, 'codec', 'json.ts'), join(SRC, 'abort.ts')].sort();
}

function tsc(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), ...args], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`tsc exited with ${code ?? signal}`))));
  });
}

/** Builds `packages/client/dist/` (replacing what is there). */
export async function buildClient(): Promise<void> {
  const dist = join(CLIENT_PACKAGE, 'dist');
  const esm = join(dist, 'esm');
  const cjs = join(dist, 'cjs');
  await rm(dist, { recursive: true, force: true });
  const sources = await clientSources();
  // a generated project: only these files, no @types/node, the browser's lib
  const config = join(CLIENT_PACKAGE, `tsconfig.build-${process.pid}.json`);
  const compilerOptions = {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023', 'DOM', 'DOM.Iterable'],
    types: [],
    strict: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    rewriteRelativeImportExtensions: true,
    declaration: true,
    rootDir: SRC,
    outDir: esm,
  };
  await writeFile(config, JSON.stringify({ compilerOptions, files: sources.map((f) => relative(CLIENT_PACKAGE, f)) }, null, 2));
  try {
    await tsc(['-p', config]);
  } finally {
    await rm(config, { force: true });
  }
  await rewriteDeclarations(esm);

  await esbuild({
    entryPoints: [join(SRC, 'client', 'index.ts')],
    bundle: true,
    format: 'cjs',
    platform: 'browser',
    target: 'es2022',
    outfile: join(cjs, 'client', 'index.js'),
    logLevel: 'warning',
  });
  for (const file of (await filesUnder(esm)).filter((f) => f.endsWith('.d.ts'))) {
    const to = join(cjs, relative(esm, file));
    await mkdir(dirname(to), { recursive: true });
    await copyFile(file, to);
  }
  await writeFile(join(cjs, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now();
  buildClient().then(
    () => process.stdout.write(`packages/client/dist/ built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`),
    (err: unknown) => {
      process.stderr.write(`build-client failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
