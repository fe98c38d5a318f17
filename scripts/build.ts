/**
 * `npm run build` (issue #14): the compiled distribution, so nothing transpiles TypeScript at run
 * time. Three outputs, all git-ignored:
 *
 * - `dist/` — every module of `src/` compiled by tsc, one `.js` (+ `.d.ts`, source map) per source
 *   file, relative imports rewritten from `.ts` to `.js`. The SDK's package entry
 *   (`hearth/client` → `dist/client/index.js`) and the runtime's workers (`dist/runtime/worker.js`)
 *   load from here; the worker's file is bundled by esbuild over tsc's (one module, not twenty:
 *   a worker starts faster).
 * - `dist/app/` — the `hearth` command (CLI and node) bundled by esbuild with its dependencies, split
 *   into chunks so a CLI command loads only what it runs and `hearth run` loads the node in a few
 *   files: loading hundreds of separate modules was most of the node's cold start
 *   (docs/performance.md). `bin/hearth.js` runs `dist/app/main.js`. A bundled module sees, as
 *   `import.meta.url`, the address of its tsc twin in `dist/`, so paths it resolves against itself
 *   (web assets, package.json, the worker) are the same in both.
 * - `build/dashboard/` — the dashboard (scripts/build-web.ts).
 *
 * `--if-stale` skips `dist/` when it was built from the same inputs (a digest of the sources, the
 * configuration and the lockfile, kept in `dist/build.json`); the dashboard has its own digest. The
 * new `dist/` is built beside the old one and swapped in with renames, so a running node or a
 * parallel test run never loads half a build.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build as esbuild, type Plugin } from 'esbuild';
import { buildDashboard, builtDigest, filesUnder, swapIn, type BuildResult } from './build-web.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(ROOT, 'src');
export const DIST = join(ROOT, 'dist');
/** Where the bundled `hearth` command lives, inside `dist/`. */
export const APP_DIR = 'app';
/** Inputs besides `src/`: a change to any of them changes what the build produces. */
const CONFIG_FILES = ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'];
/**
 * Never part of the distribution (tsconfig.build.json excludes the same): tests and what only tests
 * load — test kits, fake fetch, labs, the mDNS child, the network port's conformance suite (issue
 * #32: the package ships `dist/`, so whatever lands there is installed on users' machines).
 */
export const NOT_SHIPPED = /(\.test\.ts|testkit\.ts|-lab\.ts|\/test-support\.ts|\/test-nodes\.ts|\/network-port-suite\.ts|\/mdns-child\.ts|\/fake-fetch\.ts)$/;

/** A digest of everything `dist/` is made from. */
export async function distDigest(): Promise<string> {
  const hash = createHash('sha256');
  hash.update(await readFile(fileURLToPath(import.meta.url)));
  for (const name of CONFIG_FILES) hash.update(`\n${name}\n`).update(await readFile(join(ROOT, name)));
  const files = (await filesUnder(SRC)).filter((f) => !NOT_SHIPPED.test(f)).sort();
  for (const file of files) hash.update(`\n${relative(ROOT, file)}\n`).update(await readFile(file));
  return hash.digest('hex');
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`${relative(ROOT, args[0])} exited with ${code ?? signal}`))));
  });
}

/**
 * Declarations keep the sources' `./x.ts` specifiers (tsc rewrites them in JavaScript only): point
 * them at the `.js` files beside them, as a consumer's TypeScript resolves them.
 */
export async function rewriteDeclarations(dir: string): Promise<void> {
  for (const file of (await filesUnder(dir)).filter((f) => f.endsWith('.d.ts'))) {
    const text = await readFile(file, 'utf8');
    const fixed = text.replace(/((?:from|import)\s*\(?\s*['"])(\.{1,2}\/[^'"]+)\.ts(['"])/g, '$1$2.js$3');
    if (fixed !== text) await writeFile(file, fixed);
  }
}

/** Gives each bundled source module the `import.meta.url` of its tsc twin (see the module doc). */
function twinImportMetaUrl(appDir: string, distDir: string): Plugin {
  return {
    name: 'hearth-twin-import-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, async (args) => {
        const text = await readFile(args.path, 'utf8');
        if (!args.path.startsWith(SRC) || !text.includes('import.meta.url')) return { contents: text, loader: 'ts' };
        const twin = join(distDir, relative(SRC, args.path)).replace(/\.ts$/, '.js');
        const url = `new URL(${JSON.stringify(relative(appDir, twin))}, import.meta.url).href`;
        return { contents: text.replaceAll('import.meta.url', url), loader: 'ts' };
      });
    },
  };
}

async function bundleApp(distDir: string): Promise<void> {
  const appDir = join(distDir, APP_DIR);
  await esbuild({
    entryPoints: [join(SRC, 'main.ts')],
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir: appDir,
    chunkNames: 'chunk-[hash]',
    sourcemap: 'linked',
    // no comments, no indentation (issue #22 memory): the comments hold non-Latin-1 characters
    // (→, —), which made V8 keep the whole 5 MB chunk's source as a two-byte string; without them
    // it is 3.6 MB of one-byte source. Names stay as written (stack traces read the same; the
    // linked source map gives the lines). docs/performance.md "Memory and restart".
    minifyWhitespace: true,
    // native addons: loaded from node_modules as installed (QUIC's prebuilt binary, found by its
    // loader beside its own package, only on Node.js 22+: src/network/quic.ts)
    external: ['classic-level', '@chainsafe/libp2p-quic'],
    // CommonJS dependencies call `require`, which an ES module does not have
    banner: { js: "import { createRequire as __hearthCreateRequire } from 'node:module'; const require = __hearthCreateRequire(import.meta.url);" },
    plugins: [twinImportMetaUrl(appDir, distDir)],
    logLevel: 'warning',
  });
}

/**
 * The runtime's worker as one file (issue #33), in place of tsc's `runtime/worker.js`: a worker is
 * a fresh module graph, and loading its ~20 modules one by one was ~17 % of a worker's start
 * (100 → 83 ms to its `ready`, median of 12, docs/performance.md "Cold start"), which a node's
 * start waits for when it prepares its contexts' modules. It imports only Node.js built-ins and
 * nothing in it reads `import.meta.url`, so the bundle behaves as the modules it replaces.
 */
async function bundleWorker(distDir: string): Promise<void> {
  await esbuild({
    entryPoints: [join(SRC, 'runtime/worker.ts')],
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outfile: join(distDir, 'runtime/worker.js'),
    allowOverwrite: true,
    sourcemap: 'linked',
    minifyWhitespace: true,
    logLevel: 'warning',
  });
}

export interface BuildOptions {
  /** skip what is current */
  ifStale?: boolean;
  /**
   * Emit and bundle even when tsc reports type errors (it still compiles every file): the test run
   * type-checks on its own and should not lose its spawned nodes to a type error elsewhere.
   */
  allowTypeErrors?: boolean;
}

/** Builds `dist/` (tsc, then the bundle) unless `ifStale` and it is current; then the dashboard. */
export async function build(opts: BuildOptions = {}): Promise<BuildResult & { dashboard: boolean }> {
  const digest = await distDigest();
  let built = false;
  if (!opts.ifStale || (await builtDigest(DIST)) !== digest) {
    const staging = `${DIST}.tmp-${process.pid}`;
    await rm(staging, { recursive: true, force: true });
    try {
      const tsc = run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', staging]);
      await (opts.allowTypeErrors ? tsc.catch(() => process.stderr.write('build: type errors (above); dist/ emitted anyway\n')) : tsc);
      await rewriteDeclarations(staging);
      await bundleApp(staging);
      await bundleWorker(staging);
      await writeFile(join(staging, 'build.json'), `${JSON.stringify({ digest, builtAt: new Date().toISOString() }, null, 2)}\n`);
      await swapIn(staging, DIST);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
    built = true;
  }
  const dashboard = await buildDashboard({ ifStale: opts.ifStale });
  return { built, dir: DIST, digest, dashboard: dashboard.built };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const ifStale = process.argv.includes('--if-stale');
  const started = Date.now();
  build({ ifStale }).then(
    (r) => {
      const parts = [r.built ? 'dist/ built' : '', r.dashboard ? 'dashboard built' : ''].filter(Boolean);
      if (parts.length > 0) process.stdout.write(`${parts.join(', ')} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    },
    (err: unknown) => {
      process.stderr.write(`build failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
