/**
 * Joining a context brings its application (issue #34 §1; the reference's join bootstrap,
 * `sync_context_config`, acquires the bytecode its group names through blob sharing and retries
 * while the blob is on its way). For every context this node holds whose application version is
 * not installed here, the bundle blob governance names for it — the group's `appKey` once
 * resolved, else the bundle its `context.registered` op carries — is taken from the members of the
 * context (connected peers first, then the DHT: src/blobs/fetcher.ts), bounded by the bundle size
 * limit, checked against its blob id on the way (a peer sending other bytes or more bytes is
 * penalized and the next member asked), verified as every install is (signature, signer, digests,
 * runtime floor, and that it is the context's application: ApplicationService.installFetched),
 * and installed. A group upgrade's target version that a member lacks is fetched the same way
 * (issue #34 §1, extended): the context keeps running its current version meanwhile, its sync
 * status says the target is on its way, and the install resumes the member's migration
 * (UpgradeService.bundleInstalled).
 *
 * While a bundle is on its way the context's sync status says so (`fetching_application`) and calls
 * answer `ApplicationNotInstalled` naming it; when no member serves it (or it fails verification)
 * the status names the application and the fix (`application_unavailable`). Attempts are retried
 * with a growing delay (2 s up to 60 s) for as long as the context wants the bundle; installing it
 * by hand ends the wait at once. Everything is in memory: a restart starts over from the stored
 * contexts.
 */
import { type ApplicationCatalog, type InstalledRelease, MAX_BUNDLE_BYTES } from '../applications/index.ts';
import type { BlobService } from '../blobs/index.ts';
import { HearthError } from '../errors.ts';
import type { Registration } from './types.ts';
import type { ContextStore } from './store.ts';
import type { ContextMeta } from './types.ts';

/** The bundle bytes of a blob held here or fetched from a context's peers; `done` drops the fetch's own reference. */
export interface BundleBlobs {
  take(blobId: string, contextId: string, maxBytes: number): Promise<{ bytes: Uint8Array; done(): Promise<void> }>;
}

/** What the fetch needs of the applications domain. */
export interface FetchingCatalog extends Pick<ApplicationCatalog, 'get' | 'installedRelease'> {
  installFetched(bytes: Uint8Array, expected: { applicationId: string; bundleBlobId: string }): Promise<{ applicationId: string }>;
  onInstalled(listener: (release: InstalledRelease) => void): () => void;
}

export interface AppFetchDeps {
  records: Pick<ContextStore, 'getMeta' | 'listMeta'>;
  applications: FetchingCatalog;
  blobs: BundleBlobs;
  locate: (contextId: string) => Registration | undefined;
  now: () => number;
  /** a context's application is installed now: pull what waited for it (sync) */
  onReady?: (contextId: string) => void;
  onError?: (err: unknown, what: Record<string, unknown>) => void;
  /** the largest bundle taken from a peer (default the install limit, 512 MiB) */
  maxBundleBytes?: number;
  /** the first retry's delay and the longest (defaults 2 s and 60 s); the sweep of held contexts (10 s) */
  retry?: { firstMs?: number; maxMs?: number; sweepMs?: number };
}

export type AppProblemReason = 'fetching_application' | 'application_unavailable';

/** Why a context cannot run here yet, for its sync status and its calls. */
export interface AppProblem {
  reason: AppProblemReason;
  applicationId: string;
  bundleBlobId?: string;
  detail: string;
  /** since when (Unix ms) */
  since: number;
}

const UNRESOLVED = /^0{64}$/;
const FIX = 'install it on this node: hearth app install-dev <bundle.mpk>';

interface Want {
  applicationId: string;
  bundleBlobId: string;
  /** contexts naming this bundle; the peers of each are asked in turn */
  contexts: Set<string>;
  /** contexts that cannot run until it is installed (every context naming it, today) */
  blocking: Set<string>;
  phase: 'fetching' | 'unavailable' | 'invalid';
  since: number;
  lastError?: string;
  attempt: number;
  running: boolean;
  timer?: NodeJS.Timeout;
}

export class ApplicationFetch {
  private readonly wants = new Map<string, Want>();
  /** contexts whose application is missing and whose group names no bundle */
  private readonly unnamed = new Map<string, { applicationId: string; since: number }>();
  private readonly life = new AbortController();
  private readonly maxBytes: number;
  private readonly firstMs: number;
  private readonly maxMs: number;
  private readonly sweepMs: number;
  private sweeper?: NodeJS.Timeout;
  private unsubscribe?: () => void;

  constructor(private readonly d: AppFetchDeps) {
    this.maxBytes = d.maxBundleBytes ?? MAX_BUNDLE_BYTES;
    this.firstMs = d.retry?.firstMs ?? 2_000;
    this.maxMs = d.retry?.maxMs ?? 60_000;
    this.sweepMs = d.retry?.sweepMs ?? 10_000;
  }

  /** Looks at every held context now and every `sweepMs` (governance may name a new version at any time). */
  start(): void {
    this.unsubscribe = this.d.applications.onInstalled((r) => this.installed(r));
    const sweep = () => void this.sweep().catch((err: unknown) => this.d.onError?.(err, { step: 'sweep' }));
    sweep();
    this.sweeper = setInterval(sweep, this.sweepMs);
    this.sweeper.unref?.();
  }

  stop(): void {
    this.life.abort();
    this.unsubscribe?.();
    clearInterval(this.sweeper);
    for (const w of this.wants.values()) clearTimeout(w.timer);
  }

  /** A context was joined or followed: fetch its application now if it is missing. */
  ensure(contextId: string): void {
    void (async () => {
      const meta = await this.d.records.getMeta(contextId);
      if (meta) await this.check(meta);
    })().catch((err: unknown) => this.d.onError?.(err, { contextId, step: 'ensure' }));
  }

  /** Why the context cannot run its application here, or undefined when it can. */
  problem(contextId: string): AppProblem | undefined {
    const un = this.unnamed.get(contextId);
    if (un) {
      const app = un.applicationId;
      return { reason: 'application_unavailable', applicationId: app, since: un.since, detail: `application ${app} is not installed and its group names no bundle to fetch from peers: ${FIX}` };
    }
    for (const w of this.wants.values()) {
      if (!w.contexts.has(contextId)) continue;
      const base = { applicationId: w.applicationId, bundleBlobId: w.bundleBlobId, since: w.since };
      if (!w.blocking.has(contextId)) return { ...base, ...upgradeProblem(w) };
      if (w.phase === 'fetching') {
        const last = w.lastError ? ` (last attempt: ${w.lastError})` : '';
        return { ...base, reason: 'fetching_application', detail: `fetching application ${w.applicationId} (bundle ${w.bundleBlobId}) from the context's peers${last}` };
      }
      const why = w.phase === 'invalid' ? `its bundle ${w.bundleBlobId} fails verification: ${w.lastError}` : `no member serves its bundle ${w.bundleBlobId} (asked again every minute at most)`;
      return { ...base, reason: 'application_unavailable', detail: `application ${w.applicationId} is not installed: ${why}; ${FIX}` };
    }
    return undefined;
  }

  private async sweep(): Promise<void> {
    const metas = await this.d.records.listMeta();
    const held = new Set(metas.map((m) => m.id));
    // one look-up per application and bundle in a sweep, however many contexts share them
    const memo = new Map<string, Promise<unknown>>();
    for (const meta of metas) await this.check(meta, memo);
    // contexts deleted or left meanwhile want nothing any more
    for (const id of this.unnamed.keys()) if (!held.has(id)) this.unnamed.delete(id);
    for (const [blobId, w] of this.wants) {
      for (const id of w.contexts) if (!held.has(id)) (w.contexts.delete(id), w.blocking.delete(id));
      if (w.contexts.size === 0) this.drop(blobId);
    }
  }

  /** What the context lacks here, if anything: the version it runs. */
  private async check(meta: ContextMeta, memo = new Map<string, Promise<unknown>>()): Promise<void> {
    const apps = this.d.applications;
    const once = <T>(key: string, f: () => Promise<T>): Promise<T> => {
      if (!memo.has(key)) memo.set(key, f());
      return memo.get(key) as Promise<T>;
    };
    const installed = (bundle: string) => once(`r:${bundle}`, async () => (apps.installedRelease ? apps.installedRelease(bundle) : null));
    const app = await once(`a:${meta.applicationId}`, () => apps.get(meta.applicationId));
    const own = meta.bundleBlobId && apps.installedRelease ? await installed(meta.bundleBlobId) : app;
    if (!app || !own) {
      const bundle = meta.bundleBlobId ?? namedBundle(this.d.locate(meta.id), meta.id);
      this.settle(meta.id, bundle);
      if (!bundle) {
        if (!this.unnamed.has(meta.id)) this.unnamed.set(meta.id, { applicationId: meta.applicationId, since: this.d.now() });
        return;
      }
      this.unnamed.delete(meta.id);
      return this.want(meta.applicationId, bundle, meta.id, true);
    }
    // its version is installed; a group upgrade's target version this member lacks is fetched the
    // same way, without blocking: the context runs its current version until it migrates
    this.unnamed.delete(meta.id);
    const target = upgradeTarget(this.d.locate(meta.id), meta);
    if (target && !(await installed(target.bundleBlobId))) {
      this.settle(meta.id, target.bundleBlobId);
      return this.want(target.applicationId, target.bundleBlobId, meta.id, false);
    }
    this.settle(meta.id, undefined);
  }

  /** The context wants `bundle` only (or nothing): it leaves every other wait, and waits ending so are dropped. */
  private settle(contextId: string, bundle: string | undefined): void {
    for (const [blobId, w] of this.wants) {
      if (blobId === bundle) continue;
      w.contexts.delete(contextId);
      w.blocking.delete(contextId);
      if (w.contexts.size === 0) this.drop(blobId);
    }
  }

  private want(applicationId: string, bundleBlobId: string, contextId: string, blocking: boolean): void {
    let w = this.wants.get(bundleBlobId);
    if (!w) this.wants.set(bundleBlobId, (w = { applicationId, bundleBlobId, contexts: new Set(), blocking: new Set(), phase: 'fetching', since: this.d.now(), attempt: 0, running: false }));
    w.contexts.add(contextId);
    if (blocking) w.blocking.add(contextId);
    if (!w.running && w.timer === undefined) void this.attempt(w);
  }

  private async attempt(w: Want): Promise<void> {
    if (this.life.signal.aborted || this.wants.get(w.bundleBlobId) !== w) return;
    w.running = true;
    w.timer = undefined;
    const contexts = [...w.contexts];
    // the peers of each context naming the bundle are asked in turn across attempts
    const contextId = contexts[w.attempt % contexts.length]!;
    w.attempt++;
    try {
      const taken = await this.d.blobs.take(w.bundleBlobId, contextId, this.maxBytes);
      try {
        await this.d.applications.installFetched(taken.bytes, { applicationId: w.applicationId, bundleBlobId: w.bundleBlobId });
      } finally {
        await taken.done();
      }
      return; // installed(): the listener ends the wait
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (err instanceof HearthError && err.kind === 'not_found') {
        w.phase = 'unavailable';
        w.lastError = message;
      } else if (err instanceof HearthError && (err.kind === 'bad_request' || err.kind === 'payload_too_large')) {
        // the bytes are the named blob's (checked on the way), yet not a bundle this node installs
        w.phase = 'invalid';
        w.lastError = message;
      } else {
        // a peer broke the transfer (penalized, left out of the next lookups) or went silent
        w.phase = 'fetching';
        w.lastError = message;
      }
      this.d.onError?.(err, { applicationId: w.applicationId, bundleBlobId: w.bundleBlobId, contextId, step: 'fetch' });
    } finally {
      w.running = false;
    }
    if (this.wants.get(w.bundleBlobId) !== w || this.life.signal.aborted) return;
    const delay = Math.min(this.maxMs, this.firstMs * 2 ** Math.min(w.attempt - 1, 16));
    w.timer = setTimeout(() => void this.attempt(w), delay);
    w.timer.unref?.();
  }

  private installed(release: InstalledRelease): void {
    const ready = new Set<string>();
    for (const w of this.wants.values()) if (w.applicationId === release.applicationId) for (const id of w.blocking) ready.add(id);
    for (const [contextId, un] of this.unnamed) if (un.applicationId === release.applicationId) ready.add(contextId);
    this.drop(release.bundleBlobId);
    // each context waiting on this application looks again: it may run now, or still lack its own version
    void Promise.all(
      [...ready].map(async (contextId) => {
        const meta = await this.d.records.getMeta(contextId);
        if (meta) await this.check(meta);
        if (!this.problem(contextId)) this.d.onReady?.(contextId);
      }),
    ).catch((err: unknown) => this.d.onError?.(err, { step: 'installed' }));
  }

  private drop(bundleBlobId: string): void {
    const w = this.wants.get(bundleBlobId);
    if (w) clearTimeout(w.timer);
    this.wants.delete(bundleBlobId);
  }
}

/** Why an upgraded context waits for its target version (it still runs its current one meanwhile). */
function upgradeProblem(w: Want): Pick<AppProblem, 'reason' | 'detail'> {
  const what = `the group's upgrade target, application ${w.applicationId} bundle ${w.bundleBlobId}`;
  if (w.phase === 'fetching') {
    const last = w.lastError ? ` (last attempt: ${w.lastError})` : '';
    return { reason: 'fetching_application', detail: `fetching ${what}, from the context's peers; the context runs its current version until it migrates${last}` };
  }
  const why = w.phase === 'invalid' ? `fails verification: ${w.lastError}` : 'is served by no member (asked again every minute at most)';
  return { reason: 'application_unavailable', detail: `${what}, ${why}; the context runs its current version until it migrates; ${FIX}` };
}

/**
 * The version a group upgrade moves the context to, when the context does not run it yet: the
 * upgrade op's target (its application and bundle), unless the upgrade was aborted.
 */
export function upgradeTarget(reg: Registration | undefined, meta: ContextMeta): { applicationId: string; bundleBlobId: string } | undefined {
  const u = reg?.group.upgrade;
  if (!u || u.aborted || UNRESOLVED.test(u.toAppKey) || u.toAppKey === meta.bundleBlobId) return undefined;
  return { applicationId: u.targetApplicationId, bundleBlobId: u.toAppKey };
}

/**
 * The bundle governance names for a context: its group's `appKey` once resolved (the version the
 * group runs now, moved by upgrades), else the bundle its registration carried.
 */
export function namedBundle(reg: Registration | undefined, contextId: string): string | undefined {
  if (!reg) return undefined;
  if (reg.group.appKey && !UNRESOLVED.test(reg.group.appKey)) return reg.group.appKey;
  return reg.group.contexts[contextId]?.bundleBlobId;
}

/** The blob service as {@link BundleBlobs}: a local copy, or a peer's stored under one reference the caller drops. */
export function bundleBlobsOf(blobs: Pick<BlobService, 'obtain' | 'store'>): BundleBlobs {
  return {
    async take(blobId, contextId, maxBytes) {
      const { meta, fetched } = await blobs.obtain(blobId, contextId, { maxBytes });
      const done = async () => void (fetched ? await blobs.store.release(blobId) : undefined);
      try {
        if (Number(meta.size) > maxBytes) throw new HearthError('payload_too_large', `bundle blob ${blobId} is ${meta.size} bytes, above the ${maxBytes}-byte bundle limit`);
        const parts: Uint8Array[] = [];
        for await (const piece of blobs.store.read(meta)) parts.push(piece);
        return { bytes: Buffer.concat(parts), done };
      } catch (err) {
        await done();
        throw err;
      }
    },
  };
}
