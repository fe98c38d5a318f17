/**
 * A small libp2p network without a relay, for bench/relay-search-idle.ts (libp2p stays inside
 * src/network/): three DHT peers and a node P connected to all three that may listen on
 * `/p2p-circuit` (as a hearth node does once it finds itself private), its relay transport as
 * libp2p ships it or with hearth's bounded search (relay-search.ts). Not used by the node.
 */
import './polyfill.ts';
import { generateKeyPairSync } from 'node:crypto';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { circuitRelayTransport } from '@libp2p/circuit-relay-v2';
import { identify } from '@libp2p/identify';
import type { Libp2p } from '@libp2p/interface';
import { kadDHT, passthroughMapper } from '@libp2p/kad-dht';
import { ping } from '@libp2p/ping';
import { tcp } from '@libp2p/tcp';
import { multiaddr } from '@multiformats/multiaddr';
import { createLibp2p } from 'libp2p';
import { DHT_PROTOCOL } from './internet.ts';
import { libp2pPrivateKey } from './peer-id.ts';
import { boundedRelayTransport, type RelaySearchCounts } from './relay-search.ts';

export type SearchVariant = 'nobody looks' | 'libp2p search' | 'bounded search';

async function labNode(bounded: boolean, counts?: RelaySearchCounts): Promise<{ node: Libp2p; listenCircuit(): Promise<void> }> {
  let manager: { listen(a: unknown[]): Promise<void> } | undefined;
  const node = await createLibp2p({
    privateKey: libp2pPrivateKey(generateKeyPairSync('ed25519').privateKey),
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp(), bounded ? boundedRelayTransport({}, undefined, counts) : circuitRelayTransport({})],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    services: {
      identify: identify(),
      ping: ping(),
      dht: kadDHT({ protocol: DHT_PROTOCOL, clientMode: false, peerInfoMapper: passthroughMapper }),
      transports: (components: { transportManager: { listen(a: unknown[]): Promise<void> } }) => {
        manager = components.transportManager;
        return {};
      },
    },
  });
  return { node, listenCircuit: () => manager!.listen([multiaddr('/p2p-circuit')]) };
}

/** Starts the lab network, P looking for a relay unless `nobody looks`; `stop` ends it. */
export async function relaySearchLab(variant: SearchVariant): Promise<{ counts: RelaySearchCounts; stop(): Promise<void> }> {
  const counts: RelaySearchCounts = { rounds: 0, peers: 0 };
  const peers = await Promise.all([0, 1, 2].map(() => labNode(true)));
  const p = await labNode(variant !== 'libp2p search', counts);
  const stop = async () => void (await Promise.all([p, ...peers].map((x) => x.node.stop())));
  try {
    for (const q of peers) await p.node.dial(q.node.getMultiaddrs()[0]!);
    // no relay exists: the listen settles without a reservation, the search goes on behind it
    if (variant !== 'nobody looks') await p.listenCircuit().catch(() => undefined);
  } catch (err) {
    await stop();
    throw err;
  }
  return { counts, stop };
}
