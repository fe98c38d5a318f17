/**
 * Builds the dashboard the node serves at `/admin-dashboard/` (issue #16): the Preact app in
 * `web/dashboard/` with the project's SDK (`src/client/`), bundled by esbuild into
 * `build/dashboard/` — `index.html` plus content-hashed `assets/` (no CDN, nothing fetched at run
 * time). `npm run build:web` runs it; `npm start` and `npm test` run it with `--if-stale`, which
 * rebuilds only when an input changed since the last build (a digest of every input file, the
 * bundler's and Preact's versions, kept in `build/dashboard/build.json`).
 *
 * One script on purpose: the compiled distribution (issue #14) calls `buildDashboard()` too.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, version as esbuildVersion } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SOURCE = join(ROOT, 'web', 'dashboard');
/** What the node serves (src/dashboard/assets.ts names the same directory). */
export const DASHBOARD_OUT = join(ROOT, 'build', 'dashboard');
// the dashboard bundles the SDK and the codec it imports
const INPUT_DIRS = [SOURCE, join(ROOT, 'src', 'client'), join(ROOT, 'src', 'codec')];
const HEAD_SLOT = '<!--hearth:assets-->';

export interface BuildResult {
  built: boolean;
  dir: string;
  digest: string;
}

/** Every file under `dir`, tests excluded (shared with scripts/build.ts). */
export async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else if (entry.isFile() && !entry.name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

/** A digest of everything the bundle is made from. */
export async function inputDigest(): Promise<string> {
  const hash = createHash('sha256');
  const preact = JSON.parse(await readFile(join(ROOT, 'node_modules', 'preact', 'package.json'), 'utf8')) as { version: string };
  hash.update(`esbuild ${esbuildVersion}\npreact ${preact.version}\n`);
  hash.update(await readFile(fileURLToPath(import.meta.url)));
  const files = (await Promise.all(INPUT_DIRS.map(filesUnder))).flat().sort();
  for (const file of files) {
    hash.update(`\n${relative(ROOT, file)}\n`);
    hash.update(await readFile(file));
  }
  return hash.digest('hex');
}

/** The digest a build in `dir` was made from (its `build.json`), if any. */
export async function builtDigest(dir: string): Promise<string | undefined> {
  try {
    return (JSON.parse(await readFile(join(dir, 'build.json'), 'utf8')) as { digest?: string }).digest;
  } catch {
    return undefined;
  }
}

/**
 * Bundles the dashboard into `outDir` (default `build/dashboard/`). With `ifStale`, does nothing
 * when the last build was made from the same inputs. The new build is written beside the old one
 * and swapped in with a rename, so a running node never serves half a build.
 */
export async function buildDashboard(opts: { ifStale?: boolean; outDir?: string } = {}): Promise<BuildResult> {
  const dir = opts.outDir ?? DASHBOARD_OUT;
  const digest = await inputDigest();
  if (opts.ifStale && (await builtDigest(dir)) === digest) return { built: false, dir, digest };

  const staging = `${dir}.tmp-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  const result = await build({
    entryPoints: [join(SOURCE, 'src', 'main.tsx')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    sourcemap: 'linked',
    entryNames: '[name]-[hash]',
    outdir: join(staging, 'assets'),
    metafile: true,
    logLevel: 'silent',
    legalComments: 'linked',
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const script = outputs.find((f) => f.endsWith('.js'));
  const style = outputs.find((f) => f.endsWith('.css'));
  if (!script) throw new Error('the dashboard build produced no script');
  const template = await readFile(join(SOURCE, 'index.html'), 'utf8');
  if (!template.includes(HEAD_SLOT)) throw new Error(`web/dashboard/index.html lacks the ${HEAD_SLOT} marker`);
  const tags = [
    style ? `<link rel="stylesheet" href="/admin-dashboard/assets/${style}">` : '',
    `<script type="module" src="/admin-dashboard/assets/${script}"></script>`,
  ].join('\n');
  await writeFile(join(staging, 'index.html'), template.replace(HEAD_SLOT, () => tags));
  await writeFile(join(staging, 'build.json'), `${JSON.stringify({ digest, builtAt: new Date().toISOString(), files: outputs.sort() }, null, 2)}\n`);
  await mkdir(join(dir, '..'), { recursive: true });
  await swapIn(staging, dir);
  return { built: true, dir, digest };
}

/**
 * Puts the build in `staging` in place of `dir` with renames, so a running node never serves half
 * a build (shared with scripts/build.ts).
 */
export async function swapIn(staging: string, dir: string): Promise<void> {
  const old = `${dir}.old-${process.pid}`;
  await rename(dir, old).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
  try {
    await rename(staging, dir);
  } catch (err) {
    // another build (a parallel `npm test` and `npm start`) put its own in place first: keep that one
    if ((err as NodeJS.ErrnoException).code !== 'ENOTEMPTY' && (err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    await rm(staging, { recursive: true, force: true });
  }
  await rm(old, { recursive: true, force: true });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const ifStale = process.argv.includes('--if-stale');
  buildDashboard({ ifStale }).then(
    (r) => {
      if (r.built) process.stdout.write(`dashboard built into ${relative(process.cwd(), r.dir) || r.dir}\n`);
    },
    (err: unknown) => {
      process.stderr.write(`dashboard build failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
