/**
 * Blobs between peers, assembled (docs/blobs.md "Blobs between peers"): the provider serving this
 * node's blobs on `/calimero/blob/0.0.2`, the fetcher the blob service asks for a blob it lacks
 * (connected peers, then the DHT), the announcer naming this node in the DHT as a provider of the
 * blobs it holds, and their counters. Built by the node when it has a network; `start` serves the
 * protocol and starts announcing (after the network started), `stop` ends the transfers in flight
 * and the announcements.
 */
import type { GaugeSource } from '../http/metrics.ts';
import type { Network } from '../network/index.ts';
import { BlobAnnouncer, type BlobAnnouncerDeps } from './announcer.ts';
import { PeerBlobFetcher, type BlobFetcherDeps } from './fetcher.ts';
import { blobPeerSeries, BlobPeerStats } from './peer-stats.ts';
import { BlobProvider, type PeerMembership } from './provider.ts';
import type { BlobStore } from './store.ts';

export interface BlobPeersDeps {
  network: Network;
  store: BlobStore;
  membership: PeerMembership;
  /** failures on the serving side (a chunk damaged on disk, a read error): for the logs */
  onError?: (err: unknown) => void;
  /** the fetcher's DHT step bounds (fetcher.ts) */
  dht?: BlobFetcherDeps['dht'];
  /** the announcer's timings (announcer.ts) and its failures, for the logs */
  announce?: Omit<BlobAnnouncerDeps, 'network' | 'store' | 'stats'>;
}

export class BlobPeers {
  readonly stats = new BlobPeerStats();
  /** the blob service's `PeerBlobSource` */
  readonly source: PeerBlobFetcher;
  readonly announcer: BlobAnnouncer;
  private readonly provider: BlobProvider;

  constructor(d: BlobPeersDeps) {
    this.source = new PeerBlobFetcher({ network: d.network, membership: d.membership, stats: this.stats, dht: d.dht });
    this.provider = new BlobProvider({ network: d.network, store: d.store, membership: d.membership, stats: this.stats, onError: d.onError });
    this.announcer = new BlobAnnouncer({ ...d.announce, network: d.network, store: d.store, stats: this.stats });
  }

  start(): void {
    this.provider.start();
    this.announcer.start();
  }

  stop(): void {
    this.source.stop();
    this.announcer.stop();
  }

  series(): GaugeSource[] {
    return blobPeerSeries(this.stats);
  }
}
