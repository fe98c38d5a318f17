/**
 * Blobs between peers, assembled (docs/blobs.md "Blobs between peers"): the provider serving this
 * node's blobs on `/calimero/blob/0.0.2`, the fetcher the blob service asks for a blob it lacks,
 * and their counters. Built by the node when it has a network; `start` serves the protocol (after
 * the network started), `stop` ends the transfers in flight.
 */
import type { GaugeSource } from '../http/metrics.ts';
import type { Network } from '../network/contract.ts';
import { PeerBlobFetcher } from './fetcher.ts';
import { blobPeerSeries, BlobPeerStats } from './peer-stats.ts';
import { BlobProvider, type PeerMembership } from './provider.ts';
import type { BlobStore } from './store.ts';

export interface BlobPeersDeps {
  network: Network;
  store: BlobStore;
  membership: PeerMembership;
  /** failures on the serving side (a chunk damaged on disk, a read error): for the logs */
  onError?: (err: unknown) => void;
}

export class BlobPeers {
  readonly stats = new BlobPeerStats();
  /** the blob service's `PeerBlobSource` */
  readonly source: PeerBlobFetcher;
  private readonly provider: BlobProvider;

  constructor(d: BlobPeersDeps) {
    this.source = new PeerBlobFetcher({ network: d.network, membership: d.membership, stats: this.stats });
    this.provider = new BlobProvider({ network: d.network, store: d.store, membership: d.membership, stats: this.stats, onError: d.onError });
  }

  start(): void {
    this.provider.start();
  }

  stop(): void {
    this.source.stop();
  }

  series(): GaugeSource[] {
    return blobPeerSeries(this.stats);
  }
}
