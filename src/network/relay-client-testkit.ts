/**
 * Test support for the relay tests (relay.test.ts, relay-guard.test.ts, dial-retry-relay.test.ts):
 * a bare libp2p node with the circuit relay transport, listening on no TCP address, whose transport
 * manager is handed over (as libp2p-node.ts does) so that a test can listen on a relay's `/p2p-circuit`
 * address, i.e. ask that relay for a reservation. Not a test file itself.
 */
import './polyfill.ts';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { circuitRelayTransport } from '@libp2p/circuit-relay-v2';
import { identify } from '@libp2p/identify';
import type { Libp2p } from '@libp2p/interface';
import { tcp } from '@libp2p/tcp';
import { multiaddr } from '@multiformats/multiaddr';
import { createLibp2p } from 'libp2p';
import { libp2pPrivateKey } from './peer-id.ts';
import { newNodeKey } from './test-nodes.ts';

export interface RelayClient {
  node: Libp2p;
  /** listens on `addr` (a relay's address ending in `/p2p-circuit`: a reservation request) */
  listen(addr: string): Promise<void>;
}

/**
 * A started bare relay client; the caller stops `node`. `services` are added to libp2p's (a relay
 * server, to make it a bare relay), `listen` are its own listen addresses (none by default).
 */
export async function bareRelayClient(opts: { services?: Record<string, unknown>; listen?: string[] } = {}): Promise<RelayClient> {
  let transports: { listen(a: unknown[]): Promise<void> } | undefined;
  const node = await createLibp2p({
    privateKey: libp2pPrivateKey(newNodeKey()),
    addresses: { listen: opts.listen ?? [] },
    transports: [tcp(), circuitRelayTransport({ reservationCompletionTimeout: 5_000 })],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    services: {
      identify: identify(),
      transports: (components: { transportManager: { listen(a: unknown[]): Promise<void> } }) => {
        transports = components.transportManager;
        return {};
      },
      ...opts.services,
    } as never,
  });
  return { node, listen: (addr) => transports!.listen([multiaddr(addr)]) };
}
