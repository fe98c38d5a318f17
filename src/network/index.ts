/**
 * The network domain's face: builds the peer-to-peer network the node starts and stops (libp2p
 * from `[swarm]`, `[bootstrap]`, `[discovery]` in production; a MemoryNetwork in tests), the sync
 * stream router on it, and the address book of peers dialed before (docs/network.md).
 *
 * @example
 * const network = await createNetwork({ factory: undefined, key, config, logger, store, now, publicKey, replication });
 * network.net?.status();
 */
import type { KeyObject } from 'node:crypto';
import type { Logger } from 'pino';
import type { NodeConfig } from '../config/config.ts';
import type { GaugeSource } from '../http/metrics.ts';
import type { RouteGroups } from '../http/route-groups.ts';
import type { Store } from '../store/store.ts';
import { AddressBook } from './address-book.ts';
import type { Network } from './network-port.ts';
import { createLibp2pNetwork } from './libp2p.ts';
import { networkSeries } from './metrics.ts';
import { libp2pPeerIdOf } from './peer-id.ts';
import { dialableHere } from './quic.ts';
import { StreamRouter } from './router.ts';
import { registerNetworkRoutes } from './routes.ts';

/** A network the node starts and stops (network/libp2p.ts in production; a MemoryNetwork in tests). */
export interface NodeNetwork extends Network {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export type NetworkFactory = (ctx: { key: KeyObject; config: NodeConfig; logger: Logger; remembered: string[] }) => NodeNetwork;

/** The production network: libp2p on `[swarm]`, dialing `[bootstrap] nodes`, mDNS per `[discovery]` (docs/network.md). */
const libp2pFromConfig: NetworkFactory = ({ key, config, logger, remembered }) =>
  createLibp2pNetwork({
    privateKey: key,
    host: config.swarm.host,
    port: config.swarm.port,
    // configured addresses are checked (a QUIC one on Node.js 20 is refused); remembered ones this
    // Node.js cannot dial are left out (learnt while the node ran on Node.js 22+)
    bootstrap: [...new Set([...config.bootstrap.nodes, ...remembered.filter((a) => dialableHere(a))])],
    mdns: config.discovery.mdns,
    internet: config.network,
    logger, // the network names itself (component: network) in its own child logger
  });

export interface NetworkDeps {
  /** libp2p from the config when undefined; `null` = a standalone node (no peers, nothing replicates) */
  factory: NetworkFactory | null | undefined;
  key: KeyObject;
  config: NodeConfig;
  logger: Logger;
  store: Store;
  now: () => number;
  /** the node identity's public key: the network status names the node by its libp2p peer id */
  publicKey: string;
  /**
   * governance replication's figures, merged under `replication` in the network status (read when
   * asked: governance is built after the network); a standalone node replicates nothing
   */
  replication: () => Record<string, unknown>;
}

export interface NetworkDomain {
  readonly name: 'network';
  /** absent on a standalone node */
  net?: NodeNetwork;
  /** the sync-stream router on `net` */
  router?: StreamRouter;
  /** a peer this node dialed: kept connected, and dialed again on the next start */
  onDialed(address: string): Promise<void>;
  /** `GET /admin-api/network/status` */
  routes: RouteGroups;
  metrics(): Iterable<GaugeSource>;
  startAfterListen(): Promise<void>;
  stop(): Promise<void>;
}

export async function createNetwork(d: NetworkDeps): Promise<NetworkDomain> {
  const factory = d.factory === undefined ? libp2pFromConfig : d.factory;
  const book = new AddressBook(d.store, d.now);
  const net = factory ? factory({ key: d.key, config: d.config, logger: d.logger, remembered: await book.list() }) : undefined;
  const router = net ? new StreamRouter(net) : undefined;
  return {
    name: 'network',
    net,
    router,
    onDialed: async (address) => {
      net?.keep(address);
      await book.remember(address);
    },
    routes: {
      network: (app) => registerNetworkRoutes(app, { status: () => net?.status(), peerId: libp2pPeerIdOf(d.publicKey), replication: net ? d.replication : undefined }),
    },
    metrics: () => (net ? networkSeries(() => net.status()) : []),
    // after HTTP listens (src/node/domain.ts): the libp2p stack loads when the network starts, and
    // what the domains registered on it meanwhile (topics, protocols, listeners) is taken up then
    startAfterListen: async () => {
      await net?.start();
      router?.serve();
    },
    stop: async () => {
      await net?.stop();
    },
  };
}

// What the other folders use of this domain: they import it only through this face (issue #35).
export { Follower } from './follower.ts';
export type { MemoryHub, MemoryNetwork } from './memory.ts';
export { MAX_FRAME_BYTES, MAX_GOSSIP_BYTES, PeerNetworkError, PeerRefusal } from './network-port.ts';
export type { GossipMessage, Network, PeerKey, PenaltyReason, RequestContext } from './network-port.ts';
export { StreamRouter, batches, decodeJson, encodeJson } from './router.ts';
export type { JsonObject, KindContext } from './router.ts';
export { contextTopic, namespaceTopic } from './topic-names.ts';
