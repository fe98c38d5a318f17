/**
 * The blob operations of the admin surface (admin spec "Blobs"; admin-wire-a §5), without HTTP.
 *
 * Lookups: without a context id only the local store is searched (absent → 404). With one, a local
 * miss asks the injected {@link PeerBlobSource} under the spec's 30-second discovery deadline; a
 * GET then stores the peer's bytes locally (verifying that they hash to the requested id) and
 * serves them from disk, a HEAD only reports the peer's answer (`source: "peer"`).
 */
import { parseId } from '../crypto/ids.ts';
import { HearthError, badRequest, forbidden, notFound } from '../errors.ts';
import type { BlobMeta, BlobStore } from './store.ts';
import type { BlobInfo } from '../wire/blobs.ts';

/** Spec "Limits": blob discovery deadline on the node. */
export const BLOB_DISCOVERY_TIMEOUT_MS = 30_000;

/** A peer's answer: the content as a stream, with the size the peer reported if any. */
export type PeerBlobStream = AsyncIterable<Uint8Array> & { size?: number };

/** Where blobs absent locally come from: the context's peers (fetcher.ts). */
export interface PeerBlobSource {
  /**
   * The blob from some peer of the context, or null when none has it. `signal` bounds finding
   * it; the stream then carries its own deadlines and ends with an error (before its end) when
   * the bytes are not the blob's, so a store consuming it keeps nothing.
   */
  fetch(blobId: string, contextId: string, signal: AbortSignal, opts?: { maxBytes?: number }): Promise<PeerBlobStream | null>;
}

/**
 * Ends a peer's stream when the peer broke the checks (wrong bytes, sizes past what it announced):
 * nothing was kept, and the source leaves that peer out of the blob's next lookup, so the service
 * asks again (up to {@link FETCH_ATTEMPTS} times) and reaches the next peer that has it.
 */
export class SourceBreach extends HearthError {
  constructor(message: string) {
    super('bad_gateway', message);
  }
}

/** lookups of one GET when peers keep sending bytes that are not the blob's */
export const FETCH_ATTEMPTS = 3;

/** A standalone node's (no network): no peer ever has a blob. */
export const noPeers: PeerBlobSource = {
  fetch: async () => null,
};

export interface BlobServiceDeps {
  store: BlobStore;
  peers?: PeerBlobSource;
  /** true when an installed application references the blob (DELETE then answers 403) */
  isPinned?: (blobId: string) => Promise<boolean>;
  discoveryTimeoutMs?: number;
}

const infoOf = (blobId: string, meta: BlobMeta): BlobInfo => ({
  blobId,
  size: Number(meta.size),
  hash: meta.hash,
  mimeType: meta.mime,
  source: 'local',
});

export function parseBlobId(text: string): string {
  const id = parseId(text);
  if (!id) throw badRequest(`Invalid blob ID format: expected 64 hex characters, got "${clip(text)}"`);
  return id;
}

function parseContextId(text: string | undefined): string | undefined {
  if (text === undefined || text === '') return undefined;
  const id = parseId(text);
  if (!id) throw badRequest(`The provided context_id is not a valid format: expected 64 hex characters, got "${clip(text)}"`);
  return id;
}

function parseHash(text: string | undefined): string | undefined {
  if (text === undefined || text === '') return undefined;
  const h = parseId(text);
  if (!h) throw badRequest(`The provided hash is not a valid format: expected 64 hex characters (SHA-256), got "${clip(text)}"`);
  return h;
}

const notLocal = (blobId: string) => notFound(`Blob ${blobId} not found locally; pass context_id to search the peers of a context`);

const clip = (s: string) => (s.length > 80 ? `${s.slice(0, 80)}…` : s);

export class BlobService {
  readonly store: BlobStore;
  private readonly peers: PeerBlobSource;
  private readonly isPinned: (blobId: string) => Promise<boolean>;
  private readonly timeoutMs: number;
  /** peer fetches in flight by blob id: concurrent GETs share one transfer (and one reference) */
  private readonly fetching = new Map<string, Promise<BlobMeta>>();

  constructor(deps: BlobServiceDeps) {
    this.store = deps.store;
    this.peers = deps.peers ?? noPeers;
    this.isPinned = deps.isPinned ?? (async () => false);
    this.timeoutMs = deps.discoveryTimeoutMs ?? BLOB_DISCOVERY_TIMEOUT_MS;
  }

  /**
   * Validates the query before any byte is read, then stores the stream. `contextId` is checked
   * and kept for the announcement to the context's peers (pending: replication).
   */
  prepareUpload(query: { hash?: string; contextId?: string }): { hash?: string; contextId?: string } {
    return { hash: parseHash(query.hash), contextId: parseContextId(query.contextId) };
  }

  /** `declaredBytes`: the announced size (Content-Length); refused with 507 before any byte is read when it cannot fit. */
  async upload(source: AsyncIterable<Uint8Array>, opts: { hash?: string; contextId?: string; declaredBytes?: number } = {}) {
    const { hash } = this.prepareUpload(opts);
    const r = await this.store.put(source, { expectedHash: hash, declaredBytes: opts.declaredBytes });
    return { blobId: r.blobId, size: r.size, created: r.created };
  }

  async list(): Promise<{ blobId: string; size: number }[]> {
    const out: { blobId: string; size: number }[] = [];
    for await (const [blobId, meta] of this.store.list()) out.push({ blobId, size: Number(meta.size) });
    return out;
  }

  /** HEAD: where the blob is and what is known about it. */
  async info(idText: string, contextIdText?: string): Promise<BlobInfo> {
    const blobId = parseBlobId(idText);
    const contextId = parseContextId(contextIdText);
    const meta = await this.store.get(blobId);
    if (meta) return infoOf(blobId, meta);
    const peer = await this.discover(blobId, contextId);
    // headers only: stop the transfer the peer may have started
    await peer[Symbol.asyncIterator]().return?.();
    return { blobId, size: peer.size, source: 'peer' };
  }

  /** GET: the blob's info and its bytes (from disk; a peer's copy is fetched and verified first). */
  async open(idText: string, contextIdText?: string): Promise<{ info: BlobInfo; body: AsyncIterable<Uint8Array> }> {
    const blobId = parseBlobId(idText);
    const contextId = parseContextId(contextIdText);
    const local = await this.store.get(blobId);
    if (local) return { info: infoOf(blobId, local), body: this.store.read(local) };
    if (!contextId) throw notLocal(blobId);
    let fetched = this.fetching.get(blobId);
    if (!fetched) {
      fetched = this.fetchFromPeers(blobId, contextId).finally(() => this.fetching.delete(blobId));
      this.fetching.set(blobId, fetched);
    }
    const meta = await fetched;
    return { info: { ...infoOf(blobId, meta), source: 'peer' }, body: this.store.read(meta) };
  }

  /**
   * A blob held here or taken from the peers of a context, with a bound below the store's (an
   * application bundle fetched on a join: src/contexts/app-fetch.ts). `fetched` says a peer's copy
   * was stored now, with one reference the caller owns (release it when done). Not shared with
   * concurrent GETs: its bound is its own.
   */
  async obtain(blobId: string, contextId: string, opts: { maxBytes: number }): Promise<{ meta: BlobMeta; fetched: boolean }> {
    const local = await this.store.get(blobId);
    if (local) return { meta: local, fetched: false };
    return { meta: await this.fetchFromPeers(blobId, contextId, opts.maxBytes), fetched: true };
  }

  /** Streams a peer's copy into the store (verified against the id on the way), then reads its meta. */
  private async fetchFromPeers(blobId: string, contextId: string, maxBytes?: number): Promise<BlobMeta> {
    let breach: SourceBreach | undefined;
    for (let attempt = 1; ; attempt++) {
      let peer: PeerBlobStream;
      try {
        peer = await this.discover(blobId, contextId, maxBytes);
      } catch (err) {
        throw breach ?? err; // no other peer had it: the breach is what the caller should hear of
      }
      try {
        await this.store.put(peer, { expectedId: blobId });
        break;
      } catch (err) {
        if (!(err instanceof SourceBreach) || attempt >= FETCH_ATTEMPTS) throw err;
        breach = err;
      }
    }
    const meta = await this.store.get(blobId);
    if (!meta) throw notFound(`Blob ${blobId} not found`);
    return meta;
  }

  async delete(idText: string): Promise<{ blobId: string; deleted: true; refcount: number }> {
    const blobId = parseBlobId(idText);
    if (await this.isPinned(blobId)) throw forbidden('Blob is referenced by an installed application and cannot be deleted');
    const r = await this.store.release(blobId);
    return { blobId, deleted: true, refcount: r.refcount };
  }

  private async discover(blobId: string, contextId: string | undefined, maxBytes?: number) {
    if (!contextId) throw notLocal(blobId);
    const signal = AbortSignal.timeout(this.timeoutMs);
    let onAbort: (() => void) | undefined;
    const deadline = new Promise<'timeout'>((resolve) => {
      onAbort = () => resolve('timeout');
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const fetching = maxBytes === undefined ? this.peers.fetch(blobId, contextId, signal) : this.peers.fetch(blobId, contextId, signal, { maxBytes });
      const found = await Promise.race([fetching, deadline]);
      if (found === 'timeout') {
        // a peer found just too late: end its transfer rather than leave it open
        void fetching.then((late) => late?.[Symbol.asyncIterator]().return?.(), () => undefined);
        throw notFound(`Blob ${blobId} not found locally, and no peer of context ${contextId} provided it within ${this.timeoutMs / 1000} s`);
      }
      if (!found) throw notFound(`Blob ${blobId} not found locally, and no peer of context ${contextId} has it`);
      return found;
    } catch (err) {
      if (err instanceof HearthError) throw err;
      throw new HearthError('bad_gateway', `Fetching blob ${blobId} from the peers of context ${contextId} failed`);
    } finally {
      signal.removeEventListener('abort', onAbort!);
    }
  }
}
