/**
 * The blobs domain's face: the blob store on disk (with its quota), the blob service the routes
 * and the runtime use, and — on a node with a network — blobs fetched from, served to and
 * announced to the members of a context's group on other nodes (docs/blobs.md).
 *
 * @example
 * const blobs = await createBlobs({ store, dir: paths.blobs, now, quota: config.blobs, network, membership, isPinned, logger });
 */
import type { Logger } from 'pino';
import type { BlobQuotaConfig } from '../config/defaults.ts';
import type { GaugeSource } from '../http/metrics.ts';
import type { RouteGroups } from '../http/route-groups.ts';
import type { Network } from '../network/index.ts';
import type { Store } from '../store/store.ts';
import { BlobPeers } from './peers.ts';
import type { PeerMembership } from './provider.ts';
import { registerBlobRoutes } from './routes.ts';
import { BlobService } from './service.ts';
import { BlobStore } from './store.ts';

export interface BlobsDeps {
  store: Store;
  /** the blob directory (`paths.blobs`) */
  dir: string;
  now: () => number;
  quota: BlobQuotaConfig;
  /** absent on a standalone node: no blob comes from a peer */
  network?: Network;
  /** whether a peer speaks for a member of the group a context belongs to */
  membership: PeerMembership;
  /** true when an installed application references the blob (DELETE then answers 403) */
  isPinned: (blobId: string) => Promise<boolean>;
  logger: Logger;
}

export interface BlobsDomain {
  readonly name: 'blobs';
  /** the blobs on disk (the applications catalogue keeps its bundles there) */
  store: BlobStore;
  blobs: BlobService;
  /** blobs between peers (absent when standalone) */
  peers?: BlobPeers;
  routes: RouteGroups;
  metrics(): Iterable<GaugeSource>;
  start(): void;
  stop(): void;
}

export async function createBlobs(d: BlobsDeps): Promise<BlobsDomain> {
  const store = new BlobStore(d.store, d.dir, { now: d.now, quota: d.quota });
  await store.open();
  // blobs a context names are fetched from, and served to, the members of its group on other nodes
  const peers = d.network
    ? new BlobPeers({
        network: d.network,
        store,
        membership: d.membership,
        onError: (err) => d.logger.debug({ err }, 'serving a blob to a peer failed'),
        announce: { onError: (blobId, err) => d.logger.debug({ blobId, err: (err as Error).message }, 'announcing a blob in the DHT failed') },
      })
    : undefined;
  const blobs = new BlobService({ store, peers: peers?.source, isPinned: d.isPinned });
  return {
    name: 'blobs',
    store,
    blobs,
    peers,
    routes: { blobs: (app) => registerBlobRoutes(app, { blobs }) },
    metrics: () => [...(peers?.series() ?? []), ...store.quota.series()],
    start: () => peers?.start(),
    stop: () => peers?.stop(),
  };
}

// What the other folders use of this domain: they import it only through this face (issue #35).
export type { BlobService } from './service.ts';
export type { BlobStore, StagedBlob } from './store.ts';
