/**
 * Which Chromium the browser tests drive (issue #16 "self-contained tests"): `$CHROMIUM_PATH`,
 * else a system Chromium (`/usr/bin/chromium`, `/usr/bin/chromium-browser`; the list can be
 * replaced with `$HEARTH_CHROMIUM_SYSTEM_PATHS`, colon-separated, empty for none), else the
 * headless Chromium packaged on npm as `@sparticuz/chromium` (a dev dependency), so `npm test`
 * passes on a machine with only Node and npm.
 *
 * The packaged browser is unpacked into the temporary directory on first use. It links against
 * NSS and expat; a machine without them (no system browser ever installed) gets the copies the
 * package ships for Amazon Linux, unpacked beside it and put on the browser's library path.
 * `test/global-setup.ts` resolves once before the test files start, so parallel files never
 * unpack at the same time.
 */
import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { brotliDecompressSync } from 'node:zlib';
import { chromium, type Browser } from 'playwright-core';
import tar from 'tar-stream';

export const DEFAULT_SYSTEM_PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

export interface ResolvedChromium {
  executablePath: string;
  source: 'CHROMIUM_PATH' | 'system' | 'packaged';
  /** extra environment for the browser process (the library path of a packaged browser) */
  env?: Record<string, string>;
  /** why an earlier choice was passed over */
  notes: string[];
}

export interface ResolveOptions {
  env?: NodeJS.ProcessEnv;
  /** is this an executable file? (tests replace it) */
  isExecutable?: (path: string) => Promise<boolean>;
  /** unpacks the npm-packaged browser and answers its path (tests replace it) */
  packaged?: () => Promise<{ executablePath: string; env?: Record<string, string> }>;
}

const isExecutableFile = (path: string) => access(path, constants.X_OK).then(() => true, () => false);

/** The system paths to try: `$HEARTH_CHROMIUM_SYSTEM_PATHS` when set (empty = none), else the defaults. */
export function systemPaths(env: NodeJS.ProcessEnv = process.env): string[] {
  const list = env.HEARTH_CHROMIUM_SYSTEM_PATHS;
  return list === undefined ? DEFAULT_SYSTEM_PATHS : list.split(':').filter(Boolean);
}

export async function resolveChromium(opts: ResolveOptions = {}): Promise<ResolvedChromium> {
  const env = opts.env ?? process.env;
  const isExecutable = opts.isExecutable ?? isExecutableFile;
  const notes: string[] = [];
  const given = env.CHROMIUM_PATH;
  if (given) {
    if (await isExecutable(given)) return { executablePath: given, source: 'CHROMIUM_PATH', notes };
    notes.push(`CHROMIUM_PATH=${given} is not an executable file`);
  }
  for (const path of systemPaths(env)) {
    if (await isExecutable(path)) return { executablePath: path, source: 'system', notes };
  }
  const tried = systemPaths(env);
  notes.push(tried.length ? `no system Chromium at ${tried.join(', ')}` : 'system paths hidden (HEARTH_CHROMIUM_SYSTEM_PATHS is empty)');
  const packaged = await (opts.packaged ?? unpackPackaged)();
  return { ...packaged, source: 'packaged', notes };
}

/** Unpacks `@sparticuz/chromium` (idempotent) and, when the system lacks its libraries, its own copies. */
async function unpackPackaged(): Promise<{ executablePath: string; env?: Record<string, string> }> {
  const { default: Packaged } = await import('@sparticuz/chromium');
  const executablePath = await Packaged.executablePath();
  if (!(await missingLibraries(executablePath))) return { executablePath };
  const libs = await unpackLibraries();
  return { executablePath, env: { LD_LIBRARY_PATH: [libs, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':') } };
}

async function missingLibraries(executable: string): Promise<boolean> {
  try {
    const { stdout } = await promisify(execFile)('ldd', [executable]);
    return stdout.includes('not found');
  } catch {
    return false; // no ldd: try the browser as it is
  }
}

/** `bin/al2023.tar.br` of the package: NSS, NSPR and expat, unpacked once into the temporary directory. */
export async function unpackLibraries(): Promise<string> {
  // the package exports only its entry (build/{cjs,esm}/index.*); its archives are in bin/ beside build/
  const bin = join(dirname(createRequire(import.meta.url).resolve('@sparticuz/chromium')), '..', '..', 'bin');
  const dir = join(tmpdir(), 'hearth-chromium-libs');
  if (await isExecutableFile(join(dir, '.complete'))) return dir;
  const staging = `${dir}.tmp-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  const archive = brotliDecompressSync(await readFile(join(bin, 'al2023.tar.br')));
  const extract = tar.extract();
  const done = new Promise<void>((resolve, reject) => {
    extract.on('entry', (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c) => chunks.push(c as Buffer));
      stream.on('end', () => {
        const name = header.name.replace(/^lib\//, '');
        if (header.type !== 'file' || name.includes('/') || name === '') return next();
        writeFile(join(staging, name), Buffer.concat(chunks), { mode: 0o755 }).then(() => next(), reject);
      });
    });
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  await mkdir(staging, { recursive: true });
  extract.end(archive);
  await done;
  await writeFile(join(staging, '.complete'), '', { mode: 0o755 });
  await rm(dir, { recursive: true, force: true });
  await rename(staging, dir);
  return dir;
}

const ARGS = ['--no-sandbox', '--no-zygote', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Launches the resolved Chromium headless, with the flags every browser test uses. */
export async function launchChromium(resolved?: ResolvedChromium): Promise<Browser> {
  const found = resolved ?? (await resolveChromium());
  return chromium.launch({
    executablePath: found.executablePath,
    args: ARGS,
    env: found.env ? { ...process.env, ...found.env } : undefined,
  });
}
