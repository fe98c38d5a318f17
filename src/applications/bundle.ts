/**
 * Signed application bundles end to end (runtime.md §1; admin-wire-a §3.3 steps 1–4, 7):
 * `verifyBundle` applies every check the reference applies before an install — archive caps, one
 * top-level manifest, manifest structure, the mandatory Ed25519 signature and its did:key signer,
 * every declared wasm's SHA-256 — and `buildBundle` makes such a bundle (what `hearth app bundle`
 * and the test helpers use, so the node is tested against the bundles its own tooling makes).
 */
import { createHash, type KeyObject } from 'node:crypto';
import { badRequest } from '../errors.ts';
import { ABI_SECTION, DEFAULT_MIN_RUNTIME_VERSION, MANIFEST_FORMAT_VERSION, RUNTIME_VERSION } from './constants.ts';
import { MANIFEST_NAME, readArchive, writeArchive, type ArchiveLimits } from './archive.ts';
import { parseManifest, wasmArtifacts, type BundleManifest } from './manifest.ts';
import { applicationIdOf, signManifest, verifyManifestSignature } from './signing.ts';
import { appendCustomSection, customSection, isWasmModule } from './wasm.ts';

export interface VerifiedBundle {
  manifest: BundleManifest;
  /** the manifest as signed (unknown fields included) */
  rawManifest: Record<string, unknown>;
  applicationId: string;
  /** hex SHA-256 of the canonical unsigned manifest */
  bundleHash: string;
  /** digest-checked wasm bytes by service name (`""` for the single-service form) */
  wasms: Map<string, Buffer>;
  /** service names of the multi-service form; empty for the single-service form */
  services: string[];
}

const sha256Hex = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

export interface VerifyOptions extends ArchiveLimits {
  /** the release `minRuntimeVersion` must not exceed; null skips that check (registries, tooling) */
  runtimeVersion?: string | null;
}

/** Every check of an install; 400 naming the first problem. */
export async function verifyBundle(bytes: Uint8Array, opts: VerifyOptions = {}): Promise<VerifiedBundle> {
  const files = await readArchive(bytes, opts);
  let raw: unknown;
  try {
    raw = JSON.parse(files.get(MANIFEST_NAME)!.toString('utf8'));
  } catch (err) {
    throw badRequest(`bundle: manifest.json is not valid JSON (${(err as Error).message})`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw badRequest('bundle manifest: manifest.json must hold a JSON object');
  const rawManifest = raw as Record<string, unknown>;
  // Signature first: nothing the manifest says is trusted before it verifies.
  const sig = verifyManifestSignature(rawManifest);
  const manifest = parseManifest(rawManifest, opts.runtimeVersion === undefined ? RUNTIME_VERSION : opts.runtimeVersion);
  const wasms = new Map<string, Buffer>();
  for (const { name, wasm } of wasmArtifacts(manifest)) {
    const label = name === null ? 'wasm' : `service "${name}" wasm`;
    const content = files.get(wasm.path);
    if (!content) throw badRequest(`bundle: ${label} ${JSON.stringify(wasm.path)} is declared in the manifest but missing from the archive`);
    const digest = sha256Hex(content);
    if (digest !== wasm.hash) {
      throw badRequest(`bundle: ${label} ${JSON.stringify(wasm.path)} has SHA-256 ${digest}, but the manifest declares ${wasm.hash}`);
    }
    if (!isWasmModule(content)) throw badRequest(`bundle: ${label} ${JSON.stringify(wasm.path)} is not a WebAssembly module`);
    wasms.set(name ?? '', content);
  }
  return {
    manifest,
    rawManifest,
    applicationId: applicationIdOf(manifest.package, sig.signerId),
    bundleHash: sig.bundleHash,
    wasms,
    services: manifest.services.map((s) => s.name),
  };
}

export interface BuildServiceInput {
  name: string;
  wasm: Uint8Array;
  abi?: object;
}

export interface BuildBundleInput {
  package: string;
  version: string;
  key: KeyObject;
  /** single-service form: the wasm (ignored when `services` is non-empty) */
  wasm?: Uint8Array;
  abi?: object;
  services?: BuildServiceInput[];
  name?: string;
  description?: string;
  author?: string;
  links?: { frontend?: string; github?: string; docs?: string };
  minRuntimeVersion?: string;
  /** embed `abi` into the wasm as its `calimero_abi_v1` section when it has none (default true) */
  embedAbi?: boolean;
  /** extra manifest fields (signed along) */
  extra?: Record<string, unknown>;
  signedAt?: Date;
}

export interface BuiltBundle {
  bytes: Buffer;
  manifest: Record<string, unknown>;
  applicationId: string;
  signerId: string;
}

function prepareWasm(wasm: Uint8Array, abi: object | undefined, embed: boolean, label: string): Buffer {
  if (!isWasmModule(wasm)) throw badRequest(`${label} is not a WebAssembly module (bad magic or version)`);
  if (abi && embed && !customSection(wasm, ABI_SECTION)) {
    return Buffer.from(appendCustomSection(wasm, ABI_SECTION, Buffer.from(JSON.stringify(abi), 'utf8')));
  }
  return Buffer.from(wasm);
}

const artifactOf = (path: string, bytes: Uint8Array) => ({ path, hash: sha256Hex(bytes), size: bytes.length });

/** Builds and signs an `.mpk`; the result passes {@link verifyBundle}. */
export async function buildBundle(input: BuildBundleInput): Promise<BuiltBundle> {
  const embed = input.embedAbi ?? true;
  const files: Array<[string, Uint8Array]> = [];
  const manifest: Record<string, unknown> = {
    version: MANIFEST_FORMAT_VERSION,
    package: input.package,
    appVersion: input.version,
    minRuntimeVersion: input.minRuntimeVersion ?? DEFAULT_MIN_RUNTIME_VERSION,
    metadata: {
      name: input.name ?? input.package,
      ...(input.description ? { description: input.description } : {}),
      ...(input.author ? { author: input.author } : {}),
    },
    ...(input.links ? { links: input.links } : {}),
    ...input.extra,
  };
  if (input.services && input.services.length > 0) {
    manifest.services = input.services.map((s) => {
      const wasm = prepareWasm(s.wasm, s.abi, embed, `service ${s.name} wasm`);
      files.push([`${s.name}.wasm`, wasm]);
      const entry: Record<string, unknown> = { name: s.name, wasm: artifactOf(`${s.name}.wasm`, wasm) };
      if (s.abi) {
        const abi = Buffer.from(JSON.stringify(s.abi, null, 2));
        files.push([`${s.name}.abi.json`, abi]);
        entry.abi = artifactOf(`${s.name}.abi.json`, abi);
      }
      return entry;
    });
  } else {
    if (!input.wasm) throw badRequest('a bundle needs a wasm (or services)');
    const wasm = prepareWasm(input.wasm, input.abi, embed, 'wasm');
    files.push(['app.wasm', wasm]);
    manifest.wasm = artifactOf('app.wasm', wasm);
    if (input.abi) {
      const abi = Buffer.from(JSON.stringify(input.abi, null, 2));
      files.push(['abi.json', abi]);
      manifest.abi = artifactOf('abi.json', abi);
    }
  }
  // The structural rules are checked before signing, so a bad name fails here and not at install.
  const signed = signManifest(manifest, input.key, input.signedAt);
  parseManifest(signed, null);
  const bytes = await writeArchive([[MANIFEST_NAME, Buffer.from(JSON.stringify(signed, null, 2))], ...files]);
  const signerId = signed.signerId as string;
  return { bytes, manifest: signed, applicationId: applicationIdOf(input.package, signerId), signerId };
}
