/**
 * Fetches a blob this node lacks from the peers of a context (domain.md §5.2; admin spec "Blobs":
 * no DHT, the context's peers are swept). The connected peers whose node key speaks for a member
 * of the context's group (the injected {@link PeerMembership}) are all asked at once over
 * `/calimero/blob/0.0.2`; the first that answers `found` streams the blob and the others are
 * dropped. The caller's signal bounds that discovery; the transfer then has the reference's own
 * deadlines (60 s in all, 30 s between two frames).
 *
 * The stream handed to the blob store is checked as it goes: never more bytes than the peer
 * announced, never a frame past one chunk, and at the end the announced size and the blob id
 * recomputed from the bytes (1 MiB chunks, as the store cuts them). Any breach ends the stream with
 * an error before its end, so the store discards what it staged: bad bytes are never kept. The
 * peer is penalized for a breach, and every outcome is counted (peer-stats.ts).
 *
 * When no connected member has it, a DHT step follows (issue #24; docs/blobs.md "Found through the
 * DHT"): the providers the DHT names for the blob id (announcer.ts on their side) are asked one
 * after another, bounded by a search deadline, a number of records looked at and a number of
 * providers asked, each with its own answer deadline; a provider that is not a member of the
 * context is never asked (the request would tell it the context id). A provider whose transfer
 * broke the checks is left out of the next lookups of that blob, so the blob service's retry
 * (service.ts) reaches the next provider.
 */
import { createHash } from 'node:crypto';
import { HearthError } from '../errors.ts';
import { PeerNetworkError, type Network, type PeerKey, type PenaltyReason } from '../network/index.ts';
import { BLOB_PROTOCOL, CHUNK_TIMEOUT_MS, encodeRequest, FETCH_TIMEOUT_MS, MAX_CHUNK_FRAME_BYTES, parseAnswer } from './peer-protocol.ts';
import type { AskOutcome, BlobPeerStats, TransferOutcome } from './peer-stats.ts';
import type { PeerMembership } from './provider.ts';
import { SourceBreach, type PeerBlobSource, type PeerBlobStream } from './service.ts';
import { blobIdOf, CHUNK_SIZE, DEFAULT_MAX_BLOB_BYTES } from './store.ts';

export interface BlobFetcherDeps {
  network: Network;
  membership: PeerMembership;
  stats: BlobPeerStats;
  /** a whole transfer (default 60 s) */
  fetchTimeoutMs?: number;
  /** between two frames, the first answer included (default 30 s) */
  chunkTimeoutMs?: number;
  /** the largest blob accepted (default the store's 1 GiB) */
  maxBytes?: number;
  /** the DHT step: search deadline, provider records looked at, providers asked, each one's answer deadline */
  dht?: Partial<DhtStepLimits>;
}

export interface DhtStepLimits {
  searchMs: number;
  maxRecords: number;
  maxAsked: number;
  answerMs: number;
}

/** The DHT step's bounds: within the blob service's 30 s discovery deadline, a few providers asked. */
export const DHT_STEP_DEFAULTS: DhtStepLimits = { searchMs: 20_000, maxRecords: 20, maxAsked: 4, answerMs: 8_000 };

/** blobs whose breaching providers are remembered (the oldest forgotten first) */
const BREACHED_BLOBS = 256;

/** One peer's open exchange after it answered `found`. */
interface Offer {
  peer: PeerKey;
  frames: AsyncIterator<Uint8Array>;
  size?: number;
  close(): void;
  /** the exchange's controller: aborting it ends the transfer */
  ctl: AbortController;
}

class FrameTimeout extends Error {}

export class PeerBlobFetcher implements PeerBlobSource {
  private readonly life = new AbortController();
  private readonly fetchTimeoutMs: number;
  private readonly chunkTimeoutMs: number;
  private readonly maxBytes: number;
  private readonly dht: DhtStepLimits;
  /** peers whose transfer of a blob broke the checks, by blob id: not asked for it again */
  private readonly breached = new Map<string, Set<PeerKey>>();

  constructor(private readonly d: BlobFetcherDeps) {
    this.fetchTimeoutMs = d.fetchTimeoutMs ?? FETCH_TIMEOUT_MS;
    this.chunkTimeoutMs = d.chunkTimeoutMs ?? CHUNK_TIMEOUT_MS;
    this.maxBytes = d.maxBytes ?? DEFAULT_MAX_BLOB_BYTES;
    this.dht = { ...DHT_STEP_DEFAULTS, ...d.dht };
  }

  /** Ends every exchange in flight (node shutdown). */
  stop(): void {
    this.life.abort();
  }

  /**
   * `opts.maxBytes` bounds this blob below the fetcher's own bound (an application bundle: 512 MiB):
   * a peer announcing more is skipped and penalized, one sending more breaks the transfer.
   */
  async fetch(blobId: string, contextId: string, signal: AbortSignal, opts: { maxBytes?: number } = {}): Promise<PeerBlobStream | null> {
    const bound = Math.min(opts.maxBytes ?? this.maxBytes, this.maxBytes);
    const skip = this.breached.get(blobId);
    const peers = this.d.network.peers().filter((p) => this.d.membership(p, contextId) === true && !skip?.has(p));
    if (peers.length === 0) this.d.stats.noPeers++;
    const offer = peers.length > 0 ? await this.sweep(peers, blobId, contextId, signal, bound) : null;
    return offer ?? this.viaDht(blobId, contextId, signal, new Set(peers), bound);
  }

  /** Asks every connected member at once; the first `found` wins and the others are dropped. */
  private sweep(peers: PeerKey[], blobId: string, contextId: string, signal: AbortSignal, bound: number): Promise<PeerBlobStream | null> {
    const controllers = peers.map(() => new AbortController());
    const asks = peers.map((peer, i) => this.ask(peer, blobId, contextId, controllers[i]!, signal, this.chunkTimeoutMs, bound));
    return new Promise((resolve) => {
      let left = asks.length;
      let won = false;
      asks.forEach((ask, i) => {
        void ask.then((offer) => {
          left--;
          if (offer && !won) {
            won = true;
            controllers.forEach((c, j) => j !== i && c.abort());
            resolve(this.transfer(offer, blobId, bound));
          } else if (offer) offer.close();
          if (left === 0 && !won) resolve(null);
        });
      });
    });
  }

  /**
   * The DHT step (module doc): providers of the blob, members of the context not asked yet, asked
   * one after another until one answers `found`.
   */
  private async viaDht(blobId: string, contextId: string, signal: AbortSignal, asked: Set<PeerKey>, bound: number): Promise<PeerBlobStream | null> {
    if (signal.aborted || this.life.signal.aborted) return null;
    const stats = this.d.stats.dht;
    stats.lookups++;
    const search = new AbortController();
    const searching = AbortSignal.any([signal, this.life.signal, search.signal]);
    let tried = 0;
    try {
      const providers = this.d.network.findProviders(blobId, { timeoutMs: this.dht.searchMs, max: this.dht.maxRecords, signal: searching });
      for await (const peer of providers) {
        stats.found++;
        if (asked.has(peer) || this.breached.get(blobId)?.has(peer) || this.d.membership(peer, contextId) !== true) {
          stats.skipped++;
          continue;
        }
        asked.add(peer);
        const offer = await this.ask(peer, blobId, contextId, new AbortController(), signal, this.dht.answerMs, bound);
        if (offer) {
          stats.located++;
          return this.transfer(offer, blobId, bound);
        }
        if (++tried >= this.dht.maxAsked || signal.aborted) break;
      }
    } finally {
      search.abort(); // ends the DHT query if it is still running
    }
    stats.none++;
    return null;
  }

  private transfer(offer: Offer, blobId: string, bound: number): PeerTransfer {
    return new PeerTransfer(offer, blobId, this.d, this.chunkTimeoutMs, bound, (peer) => this.remember(blobId, peer));
  }

  /** A peer broke the checks on this blob: left out of its next lookups. */
  private remember(blobId: string, peer: PeerKey): void {
    const set = this.breached.get(blobId) ?? new Set<PeerKey>();
    set.add(peer);
    this.breached.delete(blobId);
    this.breached.set(blobId, set);
    if (this.breached.size > BREACHED_BLOBS) this.breached.delete(this.breached.keys().next().value!);
  }

  /** Asks one peer; its offer when it has the blob, null otherwise (never rejects). */
  private async ask(peer: PeerKey, blobId: string, contextId: string, ctl: AbortController, discovery: AbortSignal, answerMs: number, bound: number): Promise<Offer | null> {
    const stopping = () => ctl.abort();
    this.life.signal.addEventListener('abort', stopping, { once: true });
    // the discovery deadline bounds the question only; once found, the transfer has its own
    discovery.addEventListener('abort', stopping, { once: true });
    const close = () => {
      this.life.signal.removeEventListener('abort', stopping);
      discovery.removeEventListener('abort', stopping);
      ctl.abort();
      void frames.return?.();
    };
    const frames = this.d.network
      .requestStream(peer, BLOB_PROTOCOL, encodeRequest({ blobId, contextId }), {
        timeoutMs: this.fetchTimeoutMs,
        maxResponseFrameBytes: MAX_CHUNK_FRAME_BYTES,
        signal: ctl.signal,
      })
      [Symbol.asyncIterator]();
    const count = (outcome: AskOutcome, penalty?: string): null => {
      this.d.stats.asked[outcome]++;
      if (penalty) this.d.network.penalize(peer, 'invalid_message', `${BLOB_PROTOCOL}: ${penalty}`);
      close();
      return null;
    };
    try {
      const first = await nextWithin(frames, answerMs, ctl);
      if (first.done) return count('bad_answer', 'the exchange ended without an answer');
      const answer = parseAnswer(first.value, bound);
      if (typeof answer === 'string') return count('bad_answer', answer);
      if (!answer.found) return count('not_found');
      this.d.stats.asked.found++;
      discovery.removeEventListener('abort', stopping);
      return { peer, frames, size: answer.size, close, ctl };
    } catch (err) {
      if (err instanceof PeerNetworkError && err.kind === 'refused') return count('refused');
      return count(ctl.signal.aborted && !(err instanceof FrameTimeout) ? 'cancelled' : 'failed');
    }
  }
}

/** The blob's bytes as one peer streams them, checked on the way (module doc). */
class PeerTransfer implements PeerBlobStream {
  readonly size?: number;
  private total = 0;
  private finished = false;
  /** the blob id is recomputed over 1 MiB pieces, whatever the frames' sizes */
  private piece = createHash('sha256');
  private pieceFill = 0;
  private readonly chunkIds: string[] = [];

  constructor(
    private readonly offer: Offer,
    private readonly blobId: string,
    private readonly d: BlobFetcherDeps,
    private readonly chunkTimeoutMs: number,
    private readonly maxBytes: number,
    private readonly onBreach: (peer: PeerKey) => void,
  ) {
    this.size = offer.size;
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return {
      next: () => this.next(),
      return: async () => {
        this.end('cancelled');
        return { done: true, value: undefined };
      },
    };
  }

  private async next(): Promise<IteratorResult<Uint8Array>> {
    if (this.finished) return { done: true, value: undefined };
    let r: IteratorResult<Uint8Array>;
    try {
      r = await nextWithin(this.offer.frames, this.chunkTimeoutMs, this.offer.ctl);
    } catch (err) {
      throw this.failure(err);
    }
    if (r.done) {
      if (this.size !== undefined && this.total !== this.size) throw this.breach('bad_size', `sent ${this.total} bytes, not the ${this.size} it announced`);
      if (this.pieceFill > 0) this.chunkIds.push(this.piece.digest('hex'));
      const got = blobIdOf(this.chunkIds);
      if (got !== this.blobId) throw this.breach('bad_hash', `sent bytes that hash to blob ${got}`);
      this.end('ok');
      return { done: true, value: undefined };
    }
    const chunk = r.value;
    this.total += chunk.byteLength;
    const bound = this.size ?? this.maxBytes;
    if (this.total > bound) throw this.breach('bad_size', `sent more than the ${bound} bytes ${this.size === undefined ? 'a blob may hold' : 'it announced'}`);
    this.hash(chunk);
    return { done: false, value: chunk };
  }

  private hash(bytes: Uint8Array): void {
    let off = 0;
    while (off < bytes.byteLength) {
      const n = Math.min(CHUNK_SIZE - this.pieceFill, bytes.byteLength - off);
      this.piece.update(bytes.subarray(off, off + n));
      this.pieceFill += n;
      off += n;
      if (this.pieceFill === CHUNK_SIZE) {
        this.chunkIds.push(this.piece.digest('hex'));
        this.piece = createHash('sha256');
        this.pieceFill = 0;
      }
    }
  }

  private end(outcome: TransferOutcome): void {
    if (this.finished) return;
    this.finished = true;
    this.d.stats.transfers[outcome]++;
    this.offer.close();
  }

  /** the peer broke the protocol: penalized, counted, the transfer ended */
  private breach(outcome: TransferOutcome, what: string, reason: PenaltyReason = 'invalid_message'): HearthError {
    this.d.network.penalize(this.offer.peer, reason, `${BLOB_PROTOCOL}: blob ${this.blobId}: ${what}`);
    this.onBreach(this.offer.peer);
    this.end(outcome);
    return new SourceBreach(`Peer ${this.offer.peer} ${what} for blob ${this.blobId}; it was penalized and nothing was kept`);
  }

  private failure(err: unknown): HearthError {
    const peer = this.offer.peer;
    if (err instanceof FrameTimeout) {
      this.end('timeout');
      return new HearthError('gateway_timeout', `Peer ${peer} sent nothing of blob ${this.blobId} for ${this.chunkTimeoutMs / 1000} s; nothing was kept`);
    }
    if (err instanceof PeerNetworkError && err.kind === 'too_large') {
      return this.breach('oversized', `sent a frame past the ${MAX_CHUNK_FRAME_BYTES}-byte chunk bound`, 'oversized_frame');
    }
    if (err instanceof PeerNetworkError && err.kind === 'timeout') {
      this.end('timeout');
      return new HearthError('gateway_timeout', `Peer ${peer} did not finish sending blob ${this.blobId} in time; nothing was kept`);
    }
    const stopping = err instanceof PeerNetworkError && err.kind === 'aborted';
    this.end(stopping ? 'cancelled' : 'failed');
    if (stopping) return new HearthError('unavailable', `Fetching blob ${this.blobId} was cancelled: the node is stopping`);
    const why = err instanceof PeerNetworkError ? `: ${err.message}` : '';
    return new HearthError('bad_gateway', `Fetching blob ${this.blobId} from peer ${peer} failed${why}; nothing was kept`);
  }
}

/** The next frame, or a {@link FrameTimeout} (aborting the exchange) when none comes within `ms`. */
async function nextWithin<T>(it: AsyncIterator<T>, ms: number, ctl: AbortController): Promise<IteratorResult<T>> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ctl.abort();
  }, ms);
  try {
    return await it.next();
  } catch (err) {
    throw timedOut ? new FrameTimeout() : err;
  } finally {
    clearTimeout(timer);
  }
}
