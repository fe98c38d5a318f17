/**
 * The installed-applications catalogue (admin spec "Applications and packages"; admin-wire-a §3;
 * runtime.md §1, §4), without HTTP: dev installs from the node's filesystem, registry installs,
 * uninstall, listings, the embedded ABI, and the {@link ApplicationCatalog} the contexts
 * domain and the runtime use to load a wasm.
 *
 * Every install verifies the whole bundle first (bundle.ts), stages the `.mpk` as one blob (and
 * each named service's wasm as its own blob), then commits in ONE store batch the application row,
 * the references it takes on its blobs and the release of those a replaced version held (issue
 * #17 finding 10): a crash leaves the old row with its references or the new one with its own,
 * never a row naming a missing blob nor a reference nobody holds. Uninstall is one batch the same
 * way.
 */
import { createHash } from 'node:crypto';
import { realpath, stat, readFile } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Serial } from '../serial.ts';
import type { BlobStore, StagedBlob } from '../blobs/index.ts';
import { parseId } from '../crypto/ids.ts';
import { HearthError, badGateway, badRequest, forbidden, notFound } from '../errors.ts';
import type { Store } from '../store/store.ts';
import { MAX_BUNDLE_BYTES, RUNTIME_VERSION } from './constants.ts';
import { BUNDLE_FIX } from './archive.ts';
import type { ApplicationCatalog, InstalledApplication, InstalledRelease } from './catalog.ts';
import { verifyBundle, type VerifiedBundle } from './bundle.ts';
import { metadataJson } from './manifest.ts';
import type { ApplicationRegistry } from './registry.ts';
import { compareVersions } from './semver.ts';
import { APPLICATIONS_SPACE, ApplicationStore, blobsOf, type AppRecord, type VersionRecord } from './store.ts';
import { embeddedAbi, readOnlyMethodsOf } from './wasm.ts';
import type { ApplicationVersionEntry, LatestVersion } from '../wire/applications.ts';

export interface ApplicationServiceDeps {
  store: Store;
  blobs: BlobStore;
  registry: ApplicationRegistry;
  /** when set, dev installs are confined to this directory (403 outside it) */
  devInstallRoot?: string;
  now?: () => number;
  runtimeVersion?: string;
}

/** An installed application with what the wire row needs besides the catalog's fields. */
export interface ApplicationDetails extends InstalledApplication {
  /** `Application.metadata` as JSON text */
  metadata: string;
  /** named service → its wasm blob id */
  serviceBlobs: Record<string, string>;
}

/** Version listings are the wire's shapes (src/wire/applications.ts). */
export type { ApplicationVersionEntry, LatestVersion };

/** Verified bundles kept in memory, so repeated wasm/ABI reads do not unpack the blob each time. */
const BUNDLE_CACHE_SIZE = 8;

export class ApplicationService implements ApplicationCatalog {
  private readonly apps: ApplicationStore;
  private readonly serial = new Serial();
  private readonly cache = new Map<string, Promise<VerifiedBundle>>();
  private readonly readOnly = new WeakMap<VerifiedBundle, Map<string, Set<string>>>();
  private readonly now: () => number;
  private readonly installed = new Set<(release: InstalledRelease) => void>();

  /**
   * Read-only methods per installed version and service (`blobId|service`), for the calls' lookup
   * without waiting. A version's ABI is fixed by its bundle's content; what may change is whether
   * it is installed, so any write of the applications space forgets them all, and an answer read
   * while such a write began or ended is not kept (`appWrites` moved).
   */
  private readonly readOnlyKept = new Map<string, Set<string>>();
  private appWrites = 0;

  constructor(private readonly deps: ApplicationServiceDeps) {
    this.apps = new ApplicationStore(deps.store);
    this.now = deps.now ?? Date.now;
    deps.store.observe((ops) => {
      if (!ops.some((op) => op.space === APPLICATIONS_SPACE)) return;
      this.appWrites++;
      this.readOnlyKept.clear();
    });
  }

  /** Hears of every version installed, once its record is durable (upgrades waiting for it resume). */
  onInstalled(listener: (release: InstalledRelease) => void): () => void {
    this.installed.add(listener);
    return () => this.installed.delete(listener);
  }

  // ---- installs -------------------------------------------------------------------------------

  /** `POST /install-dev-application`: a signed `.mpk` on the node's own filesystem. */
  async installDev(pathText: string): Promise<{ applicationId: string }> {
    const path = await this.checkDevPath(pathText);
    const st = await stat(path);
    if (!st.isFile()) throw badRequest(`${pathText} is not a regular file`);
    if (st.size > MAX_BUNDLE_BYTES) throw new HearthError('payload_too_large', `${pathText} is ${st.size} bytes, above the ${MAX_BUNDLE_BYTES}-byte bundle limit`);
    const bytes = await readFile(path);
    return this.installBytes(bytes, pathToFileURL(path).href);
  }

  /** `POST /install-application {package, version}`: resolved from the configured registry. */
  async installFromRegistry(pkg: string, version: string, signal?: AbortSignal): Promise<{ applicationId: string }> {
    const found = await this.deps.registry.resolve(pkg, version, signal);
    let bundle: VerifiedBundle;
    try {
      bundle = await this.verify(found.bytes);
    } catch (err) {
      // The caller named valid coordinates; a bad bundle is the registry's fault.
      if (err instanceof HearthError && err.kind === 'bad_request') throw badGateway(`The registry's bundle for ${pkg}@${version} is invalid: ${err.message}`);
      throw err;
    }
    const { manifest } = bundle;
    if (manifest.package !== pkg || manifest.appVersion !== version) {
      throw badGateway(`The registry answered ${manifest.package}@${manifest.appVersion} when asked for ${pkg}@${version}`);
    }
    return this.commit(bundle, found.bytes, found.source);
  }

  /**
   * hearth: a dev install of uploaded bundle bytes (`PUT /install-dev-application/bundle`, e.g. from
   * the dashboard). A node whose operator confined dev installs to `dev_install_root` refuses it.
   */
  async installUpload(bytes: Uint8Array): Promise<{ applicationId: string }> {
    if (this.deps.devInstallRoot) {
      throw forbidden('this node takes dev installs only from files under its dev_install_root: copy the bundle there and install it by path');
    }
    return this.installBytes(bytes, `upload:sha256:${createHash('sha256').update(bytes).digest('hex')}`);
  }

  /**
   * Installs a bundle taken from the peers of a context this node joined (src/contexts/app-fetch.ts),
   * with the checks of every install (bundle.ts: signature, signer, digests, runtime floor), and
   * only when it is the application the context names: a bundle of another application is refused
   * (400) and nothing is installed. The source shown is `blob:<bundle blob id>`.
   */
  async installFetched(bytes: Uint8Array, expected: { applicationId: string; bundleBlobId: string }): Promise<{ applicationId: string }> {
    const bundle = await this.verify(bytes);
    if (bundle.applicationId !== expected.applicationId) {
      throw badRequest(`bundle blob ${expected.bundleBlobId} holds application ${bundle.applicationId} (${bundle.manifest.package}), not the context's ${expected.applicationId}`);
    }
    return this.commit(bundle, bytes, `blob:${expected.bundleBlobId}`);
  }

  /** Verifies and installs bundle bytes (the dev path and tests). */
  async installBytes(bytes: Uint8Array, source: string): Promise<{ applicationId: string }> {
    return this.commit(await this.verify(bytes), bytes, source);
  }

  private verify(bytes: Uint8Array): Promise<VerifiedBundle> {
    return verifyBundle(bytes, { runtimeVersion: this.deps.runtimeVersion ?? RUNTIME_VERSION });
  }

  /**
   * Path rules of a dev install (admin-wire-a §3.3 "Dev-install path handling"): no `..`
   * component (400), a signed `.mpk` only (400), inside the configured root if any (403, checked on
   * the path as given and again after symlinks are resolved), and an existing file (404).
   */
  private async checkDevPath(pathText: string): Promise<string> {
    if (pathText.trim() === '') throw badRequest('path must name a signed application bundle (.mpk) on the node');
    if (pathText.includes('\0')) throw badRequest('path must not contain NUL characters');
    if (pathText.split(/[\\/]/).includes('..')) throw badRequest(`path ${JSON.stringify(pathText)} must not contain ".." components`);
    if (pathText.toLowerCase().endsWith('.wasm')) {
      throw badRequest(`${pathText} is not a signed application bundle (.mpk) but a raw WebAssembly module: ${BUNDLE_FIX}`);
    }
    if (!pathText.toLowerCase().endsWith('.mpk')) {
      throw badRequest(`${pathText} is not a signed application bundle (.mpk): only signed bundles can be installed`);
    }
    const absolute = resolve(pathText);
    const root = this.deps.devInstallRoot ? resolve(this.deps.devInstallRoot) : undefined;
    if (root && !inside(root, absolute)) throw forbidden('install path is not permitted');
    let real: string;
    try {
      real = await realpath(absolute);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') throw notFound(`application file not found at ${pathText}`);
      if (code === 'EACCES') throw forbidden(`the node may not read ${pathText}`);
      throw err;
    }
    if (root && !inside(await realpath(root).catch(() => root), real)) throw forbidden('install path is not permitted');
    return real;
  }

  private commit(bundle: VerifiedBundle, bytes: Uint8Array, source: string): Promise<{ applicationId: string }> {
    const id = bundle.applicationId;
    return this.serial.run(async () => {
      const staged: StagedBlob[] = [];
      try {
        staged.push(await this.deps.blobs.stage(once(bytes)));
        const serviceBlobs: Record<string, string> = {};
        for (const name of bundle.services) {
          const s = await this.deps.blobs.stage(once(bundle.wasms.get(name)!));
          staged.push(s);
          serviceBlobs[name] = s.blobId;
        }
        const entry: VersionRecord = {
          version: bundle.manifest.appVersion,
          blobId: staged[0].blobId,
          size: bytes.length,
          source,
          metadata: metadataJson(bundle.manifest),
          services: bundle.services,
          serviceBlobs,
          installedAt: this.now(),
        };
        const existing = await this.apps.get(id);
        // A reinstall of a version drops the references its previous entry held (the same blobs
        // when the bytes are identical, so each version keeps exactly one reference per blob).
        const replaced = existing?.versions[entry.version];
        const record: AppRecord = {
          id,
          package: bundle.manifest.package,
          signerId: bundle.manifest.signerId,
          current: entry.version,
          versions: { ...existing?.versions, [entry.version]: entry },
        };
        await this.deps.blobs.change({ add: staged, release: replaced ? blobsOf(replaced) : [], extra: [this.apps.putOp(record)] });
        if (replaced) for (const blobId of blobsOf(replaced)) this.cache.delete(blobId);
        for (const l of this.installed) l(releaseOf(record, entry));
        return { applicationId: id };
      } finally {
        for (const s of staged) await this.deps.blobs.discard(s);
      }
    });
  }

  /** `DELETE /applications/{id}`: idempotent; answers the id. The row and every version's blob references go in one batch. */
  uninstall(idText: string): Promise<{ applicationId: string }> {
    const id = parseAppId(idText);
    return this.serial.run(async () => {
      const record = await this.apps.get(id);
      if (record) {
        const blobIds = Object.values(record.versions).flatMap(blobsOf);
        await this.deps.blobs.change({ release: blobIds, extra: [this.apps.delOp(id)] });
        for (const blobId of blobIds) this.cache.delete(blobId);
      }
      return { applicationId: id };
    });
  }

  // ---- reads ------------------------------------------------------------------------------------

  async list(): Promise<ApplicationDetails[]> {
    return (await this.apps.all()).map(details);
  }

  /** The row of `idText` (hex or base58); 404 when absent. */
  async require(idText: string): Promise<ApplicationDetails> {
    const record = await this.apps.get(parseAppId(idText));
    if (!record) throw notFound('Application not found');
    return details(record);
  }

  async get(applicationId: string): Promise<InstalledApplication | null> {
    const id = parseId(applicationId);
    const record = id ? await this.apps.get(id) : undefined;
    return record ? details(record) : null;
  }

  async wasm(applicationId: string, service?: string): Promise<Uint8Array<ArrayBuffer>> {
    const { bundle, key } = await this.bundleFor(applicationId, service);
    // a fresh, exactly-sized copy: compiled by WebAssembly, never aliasing a pooled Buffer
    return new Uint8Array(bundle.wasms.get(key)!);
  }

  async wasmOfVersion(bundleBlobId: string, service?: string): Promise<Uint8Array<ArrayBuffer>> {
    const { bundle, key } = await this.bundleOfVersion(bundleBlobId, service);
    return new Uint8Array(bundle.wasms.get(key)!);
  }

  async installedRelease(bundleBlobId: string): Promise<InstalledRelease | null> {
    return (await this.findVersion(bundleBlobId))?.release ?? null;
  }

  async releases(applicationId: string): Promise<InstalledRelease[]> {
    const id = parseId(applicationId);
    const record = id ? await this.apps.get(id) : undefined;
    if (!record) return [];
    return Object.values(record.versions)
      .sort((a, b) => compareVersions(b.version, a.version))
      .map((v) => releaseOf(record, v));
  }

  async abiOfVersion(bundleBlobId: string, service?: string): Promise<Record<string, unknown> | null> {
    const { bundle, key } = await this.bundleOfVersion(bundleBlobId, service);
    return embeddedAbi(bundle.wasms.get(key)!);
  }

  async readOnlyMethodsOfVersion(bundleBlobId: string, service?: string): Promise<Set<string>> {
    const writes = this.appWrites;
    const { bundle, key } = await this.bundleOfVersion(bundleBlobId, service);
    const methods = this.readOnlyOf(bundle, key);
    if (writes === this.appWrites && this.readOnlyKept.size < BUNDLE_CACHE_SIZE * 4) this.readOnlyKept.set(`${bundleBlobId}|${service ?? ''}`, methods);
    return methods;
  }

  readOnlyMethodsOfVersionNow(bundleBlobId: string, service?: string): Set<string> | undefined {
    return this.readOnlyKept.get(`${bundleBlobId}|${service ?? ''}`);
  }

  installedNow(applicationId: string): boolean | undefined {
    const id = parseId(applicationId);
    if (!id) return false;
    const kept = this.apps.getNow(id);
    return kept && kept.value !== undefined;
  }

  private async findVersion(bundleBlobId: string): Promise<{ version: VersionRecord; release: InstalledRelease } | undefined> {
    const blobId = parseId(bundleBlobId);
    for (const r of blobId ? await this.apps.all() : []) {
      const v = Object.values(r.versions).find((x) => x.blobId === blobId);
      if (v) return { version: v, release: releaseOf(r, v) };
    }
    return undefined;
  }

  private async bundleOfVersion(bundleBlobId: string, service: string | undefined): Promise<{ bundle: VerifiedBundle; key: string }> {
    const found = await this.findVersion(bundleBlobId);
    if (!found) throw notFound(`No installed application version has the bundle blob ${bundleBlobId}`);
    return { bundle: await this.loadBundle(found.version.blobId), key: selectService(found.version.services, service) };
  }

  async abi(applicationId: string, service?: string): Promise<Record<string, unknown> | null> {
    const { bundle, key } = await this.bundleFor(applicationId, service);
    return embeddedAbi(bundle.wasms.get(key)!);
  }

  /** Asked on every context call: parsed once per cached bundle and service. Callers only read the set. */
  async readOnlyMethods(applicationId: string, service?: string): Promise<Set<string>> {
    const { bundle, key } = await this.bundleFor(applicationId, service);
    return this.readOnlyOf(bundle, key);
  }

  private readOnlyOf(bundle: VerifiedBundle, key: string): Set<string> {
    let byService = this.readOnly.get(bundle);
    if (!byService) this.readOnly.set(bundle, (byService = new Map()));
    let methods = byService.get(key);
    if (!methods) byService.set(key, (methods = readOnlyMethodsOf(embeddedAbi(bundle.wasms.get(key)!))));
    return methods;
  }

  /** Every version this node retains of the application, newest first. */
  async versions(idText: string): Promise<ApplicationVersionEntry[]> {
    const record = await this.apps.get(parseAppId(idText));
    if (!record) throw notFound('Application not found');
    return Object.values(record.versions)
      .sort((a, b) => compareVersions(b.version, a.version))
      .map((v) => ({ version: v.version, blobId: v.blobId, size: v.size, package: record.package }));
  }

  async packages(): Promise<string[]> {
    return [...new Set((await this.apps.all()).map((r) => r.package))].sort();
  }

  /** Versions of a package across its signers, newest first (empty for an unknown package). */
  async packageVersions(pkg: string): Promise<string[]> {
    const versions = new Set<string>();
    for (const r of await this.apps.all()) if (r.package === pkg) for (const v of Object.keys(r.versions)) versions.add(v);
    return [...versions].sort((a, b) => compareVersions(b, a));
  }

  /** The highest installed version of a package and its application; both null when unknown. */
  async latest(pkg: string): Promise<LatestVersion> {
    let best: LatestVersion = { applicationId: null, version: null };
    for (const r of await this.apps.all()) {
      if (r.package !== pkg) continue;
      for (const v of Object.keys(r.versions)) {
        if (best.version === null || compareVersions(v, best.version) > 0) best = { applicationId: r.id, version: v };
      }
    }
    return best;
  }

  /** True when an installed application holds a reference on the blob (blob DELETE answers 403). */
  async isPinned(blobId: string): Promise<boolean> {
    for (const r of await this.apps.all()) {
      if (Object.values(r.versions).some((v) => blobsOf(v).includes(blobId))) return true;
    }
    return false;
  }

  private async bundleFor(applicationId: string, service: string | undefined): Promise<{ bundle: VerifiedBundle; key: string }> {
    const id = parseId(applicationId);
    const record = id ? await this.apps.get(id) : undefined;
    if (!record) throw notFound('Application not found');
    const current = record.versions[record.current]!;
    const key = selectService(current.services, service);
    return { bundle: await this.loadBundle(current.blobId), key };
  }

  private loadBundle(blobId: string): Promise<VerifiedBundle> {
    let pending = this.cache.get(blobId);
    if (!pending) {
      pending = (async () => {
        const meta = await this.deps.blobs.get(blobId);
        if (!meta) throw notFound(`The bundle blob ${blobId} of this application is missing from the blob store`);
        const parts: Uint8Array[] = [];
        for await (const piece of this.deps.blobs.read(meta)) parts.push(piece);
        // Re-checked on every load (signature and digests), as the reference does at run time.
        return verifyBundle(Buffer.concat(parts), { runtimeVersion: null });
      })();
      this.cache.set(blobId, pending);
      pending.catch(() => this.cache.delete(blobId));
      while (this.cache.size > BUNDLE_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    }
    return pending;
  }
}

/**
 * The wasm a call names (admin-wire-a §3.4 service selection): no services → the default one, and
 * naming a service is a 400; one service → it; several → the name is required; unknown name → 400.
 * Every message names `service_name`, which clients look for.
 */
export function selectService(services: string[], name: string | undefined): string {
  const wanted = name === '' ? undefined : name;
  if (services.length === 0) {
    if (wanted !== undefined) throw badRequest('application has no named services; omit service_name');
    return '';
  }
  if (wanted === undefined) {
    if (services.length === 1) return services[0];
    throw badRequest(`application has multiple services; pass service_name (available: ${services.join(', ')})`);
  }
  if (!services.includes(wanted)) {
    throw badRequest(`service_name ${JSON.stringify(wanted)}: service not found (available: ${services.join(', ')})`);
  }
  return wanted;
}

export function parseAppId(text: string): string {
  const id = parseId(text);
  if (!id) throw badRequest(`Invalid application id ${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)}: expected 64 hex characters`);
  return id;
}

function releaseOf(r: AppRecord, v: VersionRecord): InstalledRelease {
  return { applicationId: r.id, package: r.package, signerId: r.signerId, version: v.version, bundleBlobId: v.blobId, services: v.services };
}

function details(r: AppRecord): ApplicationDetails {
  const v = r.versions[r.current]!;
  return {
    id: r.id,
    bundleBlobId: v.blobId,
    size: v.size,
    source: v.source,
    package: r.package,
    version: v.version,
    signerId: r.signerId,
    services: v.services,
    installedAt: v.installedAt,
    metadata: v.metadata,
    serviceBlobs: v.serviceBlobs,
  };
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

async function* once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}
