/**
 * Test applications: compiles `test/apps/<name>.ts` (AssemblyScript) with the `assemblyscript/asc`
 * compiler API and appends the app's ABI (`test/apps/<name>.abi.json`, when present) as a
 * `calimero_abi_v1` custom section (runtime.md §4), as the Rust SDK's build embeds it. An app whose
 * first line is `// asc-flags: <flags>` is built with those flags too (test/apps/kv_store.ts places
 * its data where a Rust guest's would be). Results
 * are cached on disk under os.tmpdir() by a hash of the sources, options and compiler version, so
 * only the first test run pays for compilation.
 *
 * @example
 *   const wasm = await buildTestApp('kv');
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import binaryen from 'binaryen';
import { appendCustomSection } from '../../src/runtime/wasm-binary.ts';

export const APPS_DIR = fileURLToPath(new URL('../apps/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE_DIR = join(tmpdir(), 'hearth-test-apps');

export interface BuildOptions {
  /** extra asc command-line flags (e.g. `['--importMemory']` to build a module the host must refuse) */
  ascFlags?: string[];
  /** skip the ABI section even when an `.abi.json` exists */
  noAbi?: boolean;
}

async function sourcesHash(name: string, opts: BuildOptions): Promise<string> {
  const h = createHash('sha256');
  const ascPkg = await readFile(join(ROOT, 'node_modules/assemblyscript/package.json'), 'utf8');
  h.update(JSON.parse(ascPkg).version).update(JSON.stringify(opts));
  const files = [`${name}.ts`, `${name}.abi.json`, ...(await readdir(join(APPS_DIR, 'lib'))).map((f) => `lib/${f}`)];
  for (const f of files.sort()) {
    const p = join(APPS_DIR, f);
    if (existsSync(p)) h.update(f).update(await readFile(p));
  }
  return h.digest('hex').slice(0, 32);
}

async function compile(name: string, opts: BuildOptions): Promise<Uint8Array> {
  const asc = (await import('assemblyscript/asc')).default;
  let binary: Uint8Array | undefined;
  const stderr: string[] = [];
  const entry = relative(ROOT, join(APPS_DIR, `${name}.ts`));
  // apps using the sdk route `abort` to panic_utf8; the others trap on it (no `env.abort` import)
  const source = await readFile(join(APPS_DIR, `${name}.ts`), 'utf8');
  const usesSdk = source.includes('./lib/sdk');
  const own = /^\/\/ asc-flags:(.*)$/m.exec(source.split('\n', 1)[0] ?? '')?.[1]?.trim().split(/\s+/) ?? [];
  const abortHook = usesSdk ? relative(ROOT, join(APPS_DIR, 'lib/sdk')).split('\\').join('/') + '/abortHook' : '';
  const { error } = await asc.main(
    [entry, '--outFile', 'out.wasm', '--runtime', 'stub', '--optimizeLevel', '1', '--use', `abort=${abortHook}`, ...own, ...(opts.ascFlags ?? [])],
    {
      readFile: async (file: string, baseDir: string) => {
        try {
          return await readFile(join(baseDir, file), 'utf8');
        } catch {
          return null;
        }
      },
      writeFile: (file: string, contents: Uint8Array | string) => {
        if (file.endsWith('.wasm') && typeof contents !== 'string') binary = contents;
      },
      listFiles: async (dir: string, baseDir: string) => {
        try {
          return await readdir(join(baseDir, dir));
        } catch {
          return null;
        }
      },
      stdout: { write: () => true } as never,
      stderr: { write: (s: string) => (stderr.push(String(s)), true) } as never,
    },
  );
  if (error || !binary) throw new Error(`asc failed for test/apps/${name}.ts: ${error?.message ?? 'no output'}\n${stderr.join('')}`);
  const abiPath = join(APPS_DIR, `${name}.abi.json`);
  if (!opts.noAbi && existsSync(abiPath)) {
    const abi = JSON.stringify(JSON.parse(await readFile(abiPath, 'utf8')));
    binary = appendCustomSection(binary, 'calimero_abi_v1', new TextEncoder().encode(abi));
  }
  return binary;
}

/** The wasm of test app `name`, compiled once per source change. */
export async function buildTestApp(name: string, opts: BuildOptions = {}): Promise<Uint8Array> {
  if (!/^[a-z0-9_-]+$/.test(name)) throw new Error(`bad test app name: ${name}`);
  const file = join(CACHE_DIR, `${name}-${await sourcesHash(name, opts)}.wasm`);
  if (existsSync(file)) return new Uint8Array(await readFile(file));
  const wasm = await compile(name, opts);
  await mkdir(CACHE_DIR, { recursive: true });
  // write-then-rename: parallel test files never read a half-written cache entry
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(tmp, wasm);
  await rename(tmp, file);
  return wasm;
}

/** A module from WebAssembly text (binaryen, which assemblyscript brings along), every feature on. */
export function wat(text: string): Uint8Array<ArrayBuffer> {
  const m = binaryen.parseText(text);
  try {
    m.setFeatures(binaryen.Features.All);
    if (!m.validate()) throw new Error('invalid WebAssembly text module');
    return m.emitBinary() as Uint8Array<ArrayBuffer>;
  } finally {
    m.dispose();
  }
}
