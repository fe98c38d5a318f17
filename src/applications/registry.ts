/**
 * Application registries (admin spec "Applications and packages": installs are registry-only;
 * admin-wire-a §3.3 "Registry"): where `install-application {package, version}` finds the signed
 * bundle. Two kinds, configured in `[registry]` of config.toml:
 *
 * - a directory (`dir`), as written by `hearth app publish`;
 * - an HTTP registry (`url`) with the reference layout: `GET {url}/api/v2/bundles/{package}/{version}`
 *   answers the bundle manifest (404 when unknown), the bundle is at
 *   `{url}/artifacts/{package}/{version}/{package}-{version}.mpk`.
 *
 * A directory uses the same relative paths (the manifest file is `api/v2/bundles/{package}/{version}`),
 * so a published directory served by any static file server is an HTTP registry.
 *
 * Errors: no registry configured → 400; coordinates no registry can resolve, an unreachable
 * registry or a malformed answer → 502 (README decision "Registry installs").
 */
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { HearthError, badGateway, badRequest, conflict } from '../errors.ts';
import { MAX_BUNDLE_BYTES } from './constants.ts';
import { verifyBundle } from './bundle.ts';
import { checkComponent } from './manifest.ts';

export interface ResolvedBundle {
  bytes: Buffer;
  /** where it came from (`file://…` or the artifact URL) */
  source: string;
}

export interface RegistrySource {
  /** for error messages */
  readonly label: string;
  /** the bundle, or null when this registry does not have these coordinates */
  fetch(pkg: string, version: string, signal: AbortSignal): Promise<ResolvedBundle | null>;
}


/** Relative paths of a registry's files (the HTTP layout, also used on disk). */
export const registryPaths = (pkg: string, version: string) => ({
  manifest: `api/v2/bundles/${pkg}/${version}`,
  artifact: `artifacts/${pkg}/${version}/${pkg}-${version}.mpk`,
});

export class DirectoryRegistry implements RegistrySource {
  readonly label: string;
  constructor(
    private readonly dir: string,
    private readonly maxBytes = MAX_BUNDLE_BYTES,
  ) {
    this.label = `registry directory ${dir}`;
  }

  async fetch(pkg: string, version: string): Promise<ResolvedBundle | null> {
    const path = join(this.dir, ...registryPaths(pkg, version).artifact.split('/'));
    try {
      const st = await stat(path);
      if (!st.isFile()) return null;
      if (st.size > this.maxBytes) throw badGateway(`${this.label}: ${pkg}@${version} is ${st.size} bytes, above the ${this.maxBytes}-byte bundle limit`);
      return { bytes: await readFile(path), source: `file://${path}` };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
      if (err instanceof HearthError) throw err;
      throw badGateway(`${this.label}: reading ${pkg}@${version} failed (${(err as Error).message})`);
    }
  }
}

export class HttpRegistry implements RegistrySource {
  readonly label: string;
  private readonly base: string;
  constructor(
    url: string,
    private readonly fetchFn: typeof fetch = globalThis.fetch,
    private readonly maxBytes = MAX_BUNDLE_BYTES,
  ) {
    this.base = url.replace(/\/+$/, '');
    this.label = `registry ${this.base}`;
  }

  async fetch(pkg: string, version: string, signal: AbortSignal): Promise<ResolvedBundle | null> {
    const paths = registryPaths(encodeURIComponent(pkg), encodeURIComponent(version));
    const manifestUrl = `${this.base}/${paths.manifest}`;
    const res = await this.get(manifestUrl, signal);
    if (res.status === 404) {
      await res.body?.cancel();
      return null;
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw badGateway(`${this.label} answered ${res.status} for ${pkg}@${version}`);
    }
    let listed: unknown;
    try {
      listed = JSON.parse((await this.readCapped(res, 1024 * 1024, manifestUrl)).toString('utf8'));
    } catch (err) {
      if (err instanceof HearthError) throw err;
      throw badGateway(`${this.label} answered a manifest for ${pkg}@${version} that is not JSON`);
    }
    const m = (typeof listed === 'object' && listed !== null ? listed : {}) as Record<string, unknown>;
    if ((m.package !== undefined && m.package !== pkg) || (m.appVersion !== undefined && m.appVersion !== version)) {
      throw badGateway(`${this.label} answered ${String(m.package)}@${String(m.appVersion)} when asked for ${pkg}@${version}`);
    }
    const artifactUrl = `${this.base}/${paths.artifact}`;
    const art = await this.get(artifactUrl, signal);
    if (!art.ok) {
      await art.body?.cancel();
      throw badGateway(`${this.label} lists ${pkg}@${version} but its bundle ${artifactUrl} answered ${art.status}`);
    }
    return { bytes: await this.readCapped(art, this.maxBytes, artifactUrl), source: artifactUrl };
  }

  private async get(url: string, signal: AbortSignal): Promise<Response> {
    try {
      return await this.fetchFn(url, { signal, redirect: 'follow' });
    } catch (err) {
      if (signal.aborted) throw badGateway(`${this.label} did not answer in time (${url})`);
      throw badGateway(`${this.label} is unreachable: ${(err as Error).message}`);
    }
  }

  private async readCapped(res: Response, cap: number, url: string): Promise<Buffer> {
    const declared = Number(res.headers.get('content-length') ?? NaN);
    if (declared > cap) throw badGateway(`${url} is ${declared} bytes, above the ${cap}-byte limit`);
    const parts: Uint8Array[] = [];
    let total = 0;
    const reader = res.body?.getReader();
    try {
      for (let r = await reader?.read(); r && !r.done; r = await reader!.read()) {
        total += r.value.length;
        if (total > cap) throw badGateway(`${url} is larger than the ${cap}-byte limit`);
        parts.push(r.value);
      }
    } catch (err) {
      await reader?.cancel().catch(() => undefined);
      if (err instanceof HearthError) throw err;
      throw badGateway(`${this.label}: reading ${url} failed (${(err as Error).message})`);
    }
    return Buffer.concat(parts);
  }
}

export interface ApplicationRegistryOptions {
  sources: RegistrySource[];
  /** deadline of one resolution */
  timeoutMs: number;
}

/** The configured registries, asked in order (directory first, then HTTP). */
export class ApplicationRegistry {
  constructor(private readonly opts: ApplicationRegistryOptions) {}

  get configured(): boolean {
    return this.opts.sources.length > 0;
  }

  async resolve(pkg: string, version: string, signal?: AbortSignal): Promise<ResolvedBundle> {
    if (!this.configured) {
      throw badRequest('No application registry is configured on this node: set [registry] dir or url in config.toml');
    }
    checkComponent(pkg, 'package');
    checkComponent(version, 'version');
    const deadline = AbortSignal.timeout(this.opts.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, deadline]) : deadline;
    for (const source of this.opts.sources) {
      const found = await source.fetch(pkg, version, combined);
      if (found) return found;
    }
    throw badGateway(`The application registry cannot resolve ${pkg}@${version} (asked: ${this.opts.sources.map((s) => s.label).join(', ')})`);
  }
}

export interface PublishResult {
  package: string;
  version: string;
  applicationId: string;
  signerId: string;
  /** the artifact's path in the registry directory */
  path: string;
  /** false when the identical bundle was already published */
  written: boolean;
}

async function writeAtomic(path: string, bytes: Uint8Array | string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  await writeFile(tmp, bytes);
  await rename(tmp, path);
}

/**
 * Puts a bundle into a registry directory after verifying it (signature, digests, structure).
 * A version is published once: different bytes for an existing version are a 409 unless `force`.
 */
export async function publishToDirectory(dir: string, bytes: Uint8Array, opts: { force?: boolean } = {}): Promise<PublishResult> {
  // The registry serves other nodes: check everything except this runtime's version floor.
  const bundle = await verifyBundle(bytes, { runtimeVersion: null });
  const { package: pkg, appVersion: version } = bundle.manifest;
  const paths = registryPaths(pkg, version);
  const artifact = join(dir, ...paths.artifact.split('/'));
  const existing = await readFile(artifact).catch(() => undefined);
  const same = existing !== undefined && Buffer.compare(existing, Buffer.from(bytes)) === 0;
  if (existing && !same && !opts.force) {
    throw conflict(`${pkg}@${version} is already published in ${dir} with other content; publish a new version (or pass --force)`);
  }
  if (!same) {
    await writeAtomic(artifact, bytes);
    await writeAtomic(join(dir, ...paths.manifest.split('/')), `${JSON.stringify(bundle.rawManifest, null, 2)}\n`);
  }
  return { package: pkg, version, applicationId: bundle.applicationId, signerId: bundle.manifest.signerId, path: artifact, written: !same };
}
