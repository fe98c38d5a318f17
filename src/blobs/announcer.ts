/**
 * Announces the blobs this node holds as providers in the DHT (issue #24 "content routing for
 * blobs"; docs/blobs.md "Found through the DHT"), so a node of the network that is not connected
 * to this one finds it by the blob id (fetcher.ts, its DHT step). A blob is announced when it is
 * stored, every held blob once after start and again every `reannounceMs` (before the records,
 * kept 24 h by the DHT nodes, expire), and withdrawn when it is deleted. Announcements run one at
 * a time from a queue; those that found no DHT peer are tried again when a peer connects. Every
 * outcome is counted (peer-stats.ts). A node without a DHT announces nothing.
 */
import { PeerNetworkError, type Network } from '../network/index.ts';
import type { BlobPeerStats } from './peer-stats.ts';
import type { BlobStore } from './store.ts';

export interface BlobAnnouncerDeps {
  network: Network;
  store: BlobStore;
  stats: BlobPeerStats;
  /** every held blob announced again this often (default 12 h, half the records' 24 h) */
  reannounceMs?: number;
  /** the first announcement of every held blob, after start (default 5 s: the bootstrap dials first) */
  startDelayMs?: number;
  /** after a peer connects, before announcing what found no peer (default 2 s: the routing table fills) */
  settleMs?: number;
  /** a failed announcement is retried after this long while peers are connected (default 30 s) */
  retryMs?: number;
  /** why an announcement failed, for the logs (debug) */
  onError?: (blobId: string, err: unknown) => void;
}

export const REANNOUNCE_MS = 12 * 60 * 60 * 1000;
/** failed announcements are retried this long after (while peers are connected) */
export const RETRY_MS = 30_000;

export class BlobAnnouncer {
  private readonly life = new AbortController();
  /** blob ids waiting to be announced (a Set: one announcement per id however often it is queued) */
  private readonly queue = new Set<string>();
  /** blob ids whose announcement found no DHT peer: tried again when a peer connects */
  private readonly waiting = new Set<string>();
  private draining = false;
  /** a retry of the waiting ids is scheduled */
  private retrying = false;
  /** the node runs no DHT: nothing is announced */
  private disabled = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly unsubscribe: (() => void)[] = [];

  constructor(private readonly d: BlobAnnouncerDeps) {}

  /** Announces from now on (the network started). */
  start(): void {
    this.unsubscribe.push(
      this.d.store.onChange(({ added, removed }) => {
        for (const id of added) this.enqueue(id);
        for (const id of removed) this.withdraw(id);
      }),
      this.d.network.onPeer((e) => {
        if (e.type === 'connected' && this.waiting.size > 0) this.later(this.d.settleMs ?? 2_000, () => this.retryWaiting());
      }),
    );
    this.later(this.d.startDelayMs ?? 5_000, () => void this.announceAll());
    const every = setInterval(() => void this.announceAll(), this.d.reannounceMs ?? REANNOUNCE_MS);
    every.unref();
    this.timers.add(every);
  }

  stop(): void {
    this.life.abort();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const off of this.unsubscribe.splice(0)) off();
    this.queue.clear();
  }

  /** Resolves when nothing is queued or being announced (tests). */
  async idle(): Promise<void> {
    while (this.draining || this.queue.size > 0) await new Promise((r) => setTimeout(r, 10));
  }

  private later(ms: number, run: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      run();
    }, ms);
    t.unref();
    this.timers.add(t);
  }

  private async announceAll(): Promise<void> {
    if (this.disabled || this.life.signal.aborted) return;
    for await (const [blobId] of this.d.store.list()) this.enqueue(blobId);
  }

  private retryWaiting(): void {
    const ids = [...this.waiting];
    this.waiting.clear();
    for (const id of ids) this.enqueue(id);
  }

  private enqueue(blobId: string): void {
    if (this.disabled || this.life.signal.aborted) return;
    this.queue.add(blobId);
    void this.drain();
  }

  private withdraw(blobId: string): void {
    this.queue.delete(blobId);
    this.waiting.delete(blobId);
    if (this.disabled) return;
    this.d.stats.announced.withdrawn++;
    void this.d.network.unprovide(blobId);
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      for (const blobId of this.queue) {
        this.queue.delete(blobId);
        if (this.life.signal.aborted) return;
        if (!(await this.d.store.get(blobId))) continue; // deleted while queued
        try {
          await this.d.network.provide(blobId, { signal: this.life.signal });
          this.d.stats.announced.ok++;
        } catch (err) {
          if (this.life.signal.aborted) return;
          const kind = err instanceof PeerNetworkError ? err.kind : undefined;
          if (kind === 'unsupported') {
            this.d.stats.announced.unsupported++;
            this.disabled = true;
            this.queue.clear();
            return;
          }
          if (kind === 'unreachable') this.d.stats.announced.no_peers++;
          else {
            this.d.stats.announced.failed++;
            this.d.onError?.(blobId, err);
          }
          // tried again when a peer connects, and after `retryMs` while peers are connected (their
          // routing table entries may land a moment after the connection)
          this.waiting.add(blobId);
          if (!this.retrying && this.d.network.peerCount() > 0) {
            this.retrying = true;
            this.later(this.d.retryMs ?? RETRY_MS, () => {
              this.retrying = false;
              this.retryWaiting();
            });
          }
        }
      }
    } finally {
      this.draining = false;
    }
  }
}
