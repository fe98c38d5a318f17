/**
 * `hearth app …`: offline tooling for signed application bundles (runtime.md §1; docs/applications.md).
 *
 * - `keygen <file>` writes an Ed25519 signing key (PKCS#8 PEM) and prints its did:key signer id;
 * - `bundle` builds and signs an `.mpk` from a wasm (+ optional ABI JSON, embedded into the wasm's
 *   `calimero_abi_v1` section when it has none), or from named services;
 * - `publish` verifies a bundle and puts it into a registry directory (the layout a node's
 *   `[registry] dir` reads, and that a static file server can serve as an HTTP registry).
 *
 * None of them talks to a node. `--output json` prints one JSON object per command.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Command } from 'commander';
import type { GlobalOpts } from './options.ts';
import { badRequest } from '../errors.ts';
import { buildBundle, type BuildServiceInput } from '../applications/bundle.ts';
import { publishToDirectory } from '../applications/registry.ts';
import { didKeyOf, loadSigningKey, rawPublicKey } from '../applications/signing.ts';
import { errnoText } from '../errno-text.ts';

type OutputOpts = GlobalOpts;

function print(opts: OutputOpts, human: string, json: Record<string, unknown>): void {
  process.stdout.write(opts.output === 'json' ? `${JSON.stringify(json)}\n` : `${human}\n`);
}

/** The command's own options with the global ones (`--output` in any position). */
const withGlobals = <T>(command: Command) => command.optsWithGlobals() as T;

async function readInput(path: string, what: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw badRequest(`cannot read ${what} ${path}: ${errnoText(err)}`);
  }
}

async function readJson(path: string, what: string): Promise<object> {
  const text = (await readInput(path, what)).toString('utf8');
  try {
    const v = JSON.parse(text);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('not a JSON object');
    return v;
  } catch (err) {
    throw badRequest(`${what} ${path} is not a JSON object (${(err as Error).message})`);
  }
}

/** `--service name=app.wasm[:abi.json]`, repeatable. */
function collectService(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

async function parseServices(specs: string[]): Promise<BuildServiceInput[]> {
  const out: BuildServiceInput[] = [];
  for (const spec of specs) {
    const m = /^([^=]+)=([^:]+)(?::(.+))?$/.exec(spec);
    if (!m) throw badRequest(`--service ${spec}: expected name=path.wasm or name=path.wasm:abi.json`);
    out.push({ name: m[1], wasm: await readInput(m[2], 'wasm'), abi: m[3] ? await readJson(m[3], 'ABI') : undefined });
  }
  return out;
}

interface BundleFlags extends OutputOpts {
  wasm?: string;
  abi?: string;
  service?: string[];
  package: string;
  version: string;
  key: string;
  out?: string;
  name?: string;
  description?: string;
  author?: string;
  frontend?: string;
  minRuntimeVersion?: string;
  embedAbi: boolean;
}

export function registerAppCommands(program: Command): Command {
  const app = program.command('app').description('applications: build, sign and publish bundles (offline); install and manage them on a node');

  app
    .command('keygen')
    .description('create an Ed25519 signing key (PKCS#8 PEM, mode 0600) and print its signer id')
    .argument('<file>', 'where to write the key')
    .option('--force', 'overwrite an existing file')
    .action(async (file: string, _opts: unknown, command: Command) => {
      const opts = withGlobals<OutputOpts & { force?: boolean }>(command);
      const { privateKey } = generateKeyPairSync('ed25519');
      const pem = privateKey.export({ format: 'pem', type: 'pkcs8' });
      await mkdir(dirname(resolve(file)), { recursive: true });
      try {
        await writeFile(file, pem, { mode: 0o600, flag: opts.force ? 'w' : 'wx' });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw badRequest(`${file} exists; pass --force to overwrite it`);
        throw err;
      }
      const signerId = didKeyOf(rawPublicKey(privateKey));
      print(opts, `wrote ${file}\nsigner id: ${signerId}`, { event: 'keygen', path: resolve(file), signerId });
    });

  app
    .command('bundle')
    .description('build and sign an .mpk from a wasm (and optional ABI) or from named services')
    .option('--wasm <file>', 'the application wasm (single-service form)')
    .option('--abi <file>', 'ABI JSON (wasm-abi/1); embedded into the wasm unless --no-embed-abi')
    .option('--service <name=wasm[:abi]>', 'a named service (repeatable; multi-service form)', collectService)
    .requiredOption('--package <name>', 'package name, reverse-DNS (e.g. com.example.kv)')
    .requiredOption('--version <semver>', 'application version')
    .requiredOption('--key <file>', 'Ed25519 private key, PKCS#8 PEM (see "hearth app keygen")')
    .option('--out <file>', 'where to write the bundle (default <package>-<version>.mpk)')
    .option('--name <text>', 'display name (default: the package name)')
    .option('--description <text>', 'description')
    .option('--author <text>', 'author')
    .option('--frontend <url>', 'frontend link')
    .option('--min-runtime-version <semver>', 'oldest node runtime the bundle runs on')
    .option('--no-embed-abi', 'do not embed the ABI into the wasm')
    .action(async (_opts: unknown, command: Command) => {
      const opts = withGlobals<BundleFlags>(command);
      if (!opts.wasm && !opts.service?.length) throw badRequest('pass --wasm <file> or at least one --service name=file.wasm');
      const key = loadSigningKey(await readInput(opts.key, 'signing key'));
      const built = await buildBundle({
        package: opts.package,
        version: opts.version,
        key,
        wasm: opts.wasm ? await readInput(opts.wasm, 'wasm') : undefined,
        abi: opts.abi ? await readJson(opts.abi, 'ABI') : undefined,
        services: opts.service ? await parseServices(opts.service) : undefined,
        name: opts.name,
        description: opts.description,
        author: opts.author,
        links: opts.frontend ? { frontend: opts.frontend } : undefined,
        minRuntimeVersion: opts.minRuntimeVersion,
        embedAbi: opts.embedAbi,
      });
      const out = resolve(opts.out ?? `${opts.package}-${opts.version}.mpk`);
      await mkdir(dirname(out), { recursive: true });
      await writeFile(out, built.bytes);
      print(opts, `wrote ${out} (${built.bytes.length} bytes)\napplication id: ${built.applicationId}\nsigner id: ${built.signerId}`, {
        event: 'bundled',
        path: out,
        size: built.bytes.length,
        package: opts.package,
        version: opts.version,
        applicationId: built.applicationId,
        signerId: built.signerId,
      });
    });

  app
    .command('publish')
    .description('verify a bundle and put it into a registry directory')
    .argument('<bundle>', 'the .mpk file')
    .requiredOption('--registry <dir>', 'registry directory (a node reads it with [registry] dir)')
    .option('--force', 'replace a published version with different content')
    .action(async (bundle: string, _opts: unknown, command: Command) => {
      const opts = withGlobals<OutputOpts & { registry: string; force?: boolean }>(command);
      const r = await publishToDirectory(resolve(opts.registry), await readInput(bundle, 'bundle'), { force: opts.force });
      print(opts, `${r.written ? 'published' : 'already published'} ${r.package}@${r.version} → ${r.path}\napplication id: ${r.applicationId}`, {
        event: 'published',
        ...r,
      });
    });
  return app;
}
