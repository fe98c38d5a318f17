/**
 * Streams to a peer reached only through a relay open on the relayed connection already there
 * (dial-retry.ts): a hearth relay on 127.0.0.1, a bare libp2p node A reserving on it and serving a
 * protocol on limited connections, a bare node B that reaches A through the relay only. libp2p's
 * own `dialProtocol` dials such a peer anew for every stream (a new circuit through the relay,
 * dropped as a duplicate once up); `dialProtocolRetrying` must not.
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
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from './contract-suite.ts';
import { dialProtocolRetrying } from './dial-retry.ts';
import { libp2pPrivateKey } from './peer-id.ts';
import { newNodeKey, TestNodes } from './test-nodes.ts';

const PROTOCOL = '/hearth-test/echo/1';

describe('streams to a peer reached through a relay', () => {
  const nodes = new TestNodes();
  const clients: Libp2p[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.stop()));
    await nodes.teardown();
  });

  /** a bare node with the relay transport, listening on no TCP address; `reserveOn` makes it reserve on that relay */
  async function bare(reserveOn?: string): Promise<Libp2p> {
    let transports: { listen(a: unknown[]): Promise<void> } | undefined;
    const node = await createLibp2p({
      privateKey: libp2pPrivateKey(newNodeKey()),
      addresses: { listen: [] },
      transports: [tcp(), circuitRelayTransport({ reservationCompletionTimeout: 5_000 })],
      connectionEncrypters: [noise()],
      streamMuxers: [yamux()],
      services: {
        identify: identify(),
        transports: (components: { transportManager: { listen(a: unknown[]): Promise<void> } }) => {
          transports = components.transportManager;
          return {};
        },
      },
    });
    clients.push(node);
    if (reserveOn) await transports!.listen([multiaddr(`${reserveOn}/p2p-circuit`)]);
    return node;
  }

  it('open on the relayed connection: one circuit through the relay for many streams', async () => {
    const relay = await nodes.start({ internet: { relayServer: true } });
    const a = await bare(relay.addresses()[0]!);
    await a.handle(PROTOCOL, (stream) => void stream.close(), { runOnLimitedConnection: true });
    const relayed = a.getMultiaddrs().find((m) => m.toString().includes('/p2p-circuit'));
    expect(relayed).toBeDefined();
    const b = await bare();
    await b.dial(relayed!, { signal: AbortSignal.timeout(10_000) });
    const opened = () => relay.status().internet!.relayGuard!.circuits.opened;
    await eventually(() => opened() === 1, 'the relay to count the circuit');
    for (let i = 0; i < 5; i++) {
      const stream = await dialProtocolRetrying(b, a.peerId, PROTOCOL, AbortSignal.timeout(10_000));
      await stream.close();
    }
    // libp2p's dialProtocol would have dialed a circuit per stream (each dropped as a duplicate)
    expect(opened()).toBe(1);
    expect(b.getConnections(a.peerId)).toHaveLength(1);
    expect(b.getConnections(a.peerId)[0]!.limits).toBeDefined();
  });
});
