/**
 * The libp2p node under `Libp2pNetwork` (libp2p.ts; domain.md §1.1): its transports (TCP, QUIC
 * where it loads, the bounded relay transport), Noise, yamux with its bytes counted (traffic.ts),
 * the connection gater, the connection manager's dial policy, mDNS, and the services (identify,
 * ping, the internet ones of internet.ts, gossipsub). The adapter keeps what it decides per peer
 * (bans, penalties, counters) and hands it in as `NodeHooks`; nothing here holds state of its own.
 *
 * This module and what it imports (libp2p, gossipsub, the DHT, circuit relay, Noise, yamux …) are
 * the larger part of the node's code: libp2p.ts loads it with `import()` when the network starts,
 * which the node does after it listens (issue #33, docs/performance.md "Listening before the
 * peer-to-peer stack loads"), so the bundler gives it chunks of its own.
 */
import './polyfill.ts';
import type { KeyObject } from 'node:crypto';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import type { CircuitRelayService } from '@libp2p/circuit-relay-v2';
import type { GossipSub } from '@libp2p/gossipsub';
import { identify } from '@libp2p/identify';
import type { Libp2p, PeerId } from '@libp2p/interface';
import type { KadDHT } from '@libp2p/kad-dht';
import { mdns } from '@libp2p/mdns';
import { ping } from '@libp2p/ping';
import { tcp } from '@libp2p/tcp';
import type { Multiaddr } from '@multiformats/multiaddr';
import { createLibp2p } from 'libp2p';
import type { PeerKey, PenaltyReason } from './network-port.ts';
import type { NetworkCounters } from './counters.ts';
import { gossipService } from './gossip-service.ts';
import type { InternetComponents, InternetOptions, RelayGuard } from './internet.ts';
import { internetServices } from './internet-services.ts';
import { libp2pPrivateKey, peerKeyOf } from './peer-id.ts';
import { quicFirstSorter, type loadQuicTransport } from './quic.ts';
import { boundedRelayTransport } from './relay-search.ts';
import { MAX_STREAMS_PER_CONNECTION, STREAM_WINDOW_BYTES } from './stream-io.ts';
import { trafficMuxer } from './traffic.ts';

/** how long one address of a peer may take to connect before libp2p tries its next one */
export const ADDRESS_DIAL_TIMEOUT_MS = 2_000;

// what libp2p.ts takes of the stack once loaded: the gossip validator and stream recovery need
// gossipsub's values, so they come with it
export { gossipValidator, regainGossipStream } from './gossip-service.ts';

/** The libp2p node with the services the adapter reads. */
export type Libp2pNode = Libp2p<{ pubsub: GossipSub; relay?: CircuitRelayService; dht?: KadDHT }>;

export interface NodeConfig {
  /** the node signing key: the peer id derives from it */
  privateKey: KeyObject;
  /** the TCP listen address */
  listen: Multiaddr;
  /** the QUIC transport, when it loaded (quic.ts) */
  quic: Awaited<ReturnType<typeof loadQuicTransport>>;
  internet: InternetOptions;
  /** local discovery by multicast DNS, and its query interval (default 10 s) */
  mdns?: boolean;
  mdnsIntervalMs?: number;
}

/** What the node asks of the adapter. */
export interface NodeHooks {
  counters: NetworkCounters;
  isBanned(peer: PeerKey): boolean;
  /** whether the address a connection comes from is banned (address-bans.ts) */
  addressBanned(address: string): boolean;
  penalize(peer: PeerKey, reason: PenaltyReason, detail?: string): void;
  /** libp2p's transport and address managers, handed over by a pseudo-service (internet.ts) */
  components(c: InternetComponents): void;
  relayGuard: RelayGuard;
}

/** A libp2p node, not yet started. */
export async function createLibp2pNode(config: NodeConfig, hooks: NodeHooks): Promise<Libp2pNode> {
  const banned = (id: PeerId) => {
    const key = peerKeyOf(id);
    return key === undefined || hooks.isBanned(key); // peers are Ed25519 node keys, nothing else
  };
  const { quic, internet } = config;
  // assigned once created; the muxer's hooks run only on connections, after start
  let node: Libp2pNode | undefined;
  node = await createLibp2p({
    start: false,
    privateKey: libp2pPrivateKey(config.privateKey),
    // no `/p2p-circuit` here: listening on it starts relay discovery, a DHT random walk (in bounded
    // rounds: relay-search.ts) while no relay is reserved; the node asks once it knows it is private
    addresses: { listen: [config.listen.toString()] },
    transports: [tcp(), ...(quic ? [quic] : []), ...(internet.relayClient ? [boundedRelayTransport({ reservationCompletionTimeout: 10_000 })] : [])],
    connectionEncrypters: [noise()],
    streamMuxers: [
      trafficMuxer(yamux({ maxInboundStreams: MAX_STREAMS_PER_CONNECTION, maxOutboundStreams: MAX_STREAMS_PER_CONNECTION, streamOptions: { maxStreamWindowSize: STREAM_WINDOW_BYTES } }), {
        bytesIn: (n) => (hooks.counters.bytesIn += n),
        bytesOut: (n) => (hooks.counters.bytesOut += n),
        serves: (protocol) => node?.getProtocols().includes(protocol) ?? false,
        unnegotiated: (streams, proposed) => {
          const conn = node?.getConnections().find((c) => c.streams === streams);
          const peer = conn && peerKeyOf(conn.remotePeer);
          if (peer) hooks.penalize(peer, 'unknown_protocol', `proposed ${proposed.slice(0, 4).join(', ')}`.slice(0, 256));
        },
      }),
    ],
    connectionGater: {
      denyInboundConnection: (conn) => hooks.addressBanned(conn.remoteAddr.toString()),
      denyDialPeer: banned,
      denyInboundEncryptedConnection: banned,
      denyOutboundEncryptedConnection: banned,
      // checked again once upgraded: a ban may land while a connection is being upgraded
      denyInboundUpgradedConnection: banned,
      denyOutboundUpgradedConnection: banned,
    },
    // addressDialTimeout: libp2p dials a peer's addresses one after another, relayed ones last, and
    // merges concurrent dials to one peer; an invitation's LAN address of a home behind NAT hangs
    // (no answer at all), and at libp2p's 6 s per address the relayed one is never reached
    // within a 5 s join dial (the NAT lab, test/e2e/network/nat-relay.e2e.test.ts)
    // addressSorter: a peer that offers QUIC and TCP is reached over QUIC (quic.ts)
    connectionManager: { maxConnections: 1024, reconnectRetries: 0, addressDialTimeout: ADDRESS_DIAL_TIMEOUT_MS, addressSorter: quicFirstSorter },
    peerDiscovery: config.mdns ? [mdns({ interval: config.mdnsIntervalMs ?? 10_000 })] : [],
    services: {
      identify: identify(),
      // two outbound pings a connection (libp2p: 1; a peer takes 2 inbound): libp2p's connection
      // monitor pings each connection every 10 s and aborts it when its ping cannot open, and the
      // DHT pings a new contact on the same protocol; on a fresh connection the two met ("Too many
      // outbound protocol streams … 2/1") and the connection went, a dial-back probe on it with it
      // (test/e2e/network/nat-quic.e2e.test.ts; docs/network.md "QUIC")
      ping: ping({ maxOutboundStreams: 2 }),
      ...internetServices(internet, (c) => hooks.components(c), hooks.relayGuard),
      pubsub: gossipService(),
    },
  });
  return node;
}
