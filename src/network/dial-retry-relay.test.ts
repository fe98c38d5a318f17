/**
 * Streams to a peer reached only through a relay open on the relayed connection already there
 * (dial-retry.ts): a hearth relay on 127.0.0.1, a bare libp2p node A reserving on it and serving a
 * protocol on limited connections, a bare node B that reaches A through the relay only. libp2p's
 * own `dialProtocol` dials such a peer anew for every stream (a new circuit through the relay,
 * dropped as a duplicate once up); `dialProtocolRetrying` must not.
 */
import './polyfill.ts';
import type { Libp2p } from '@libp2p/interface';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from './network-port-suite.ts';
import { dialProtocolRetrying } from './dial-retry.ts';
import { bareRelayClient } from './relay-client-testkit.ts';
import { TestNodes } from './test-nodes.ts';

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
    const { node, listen } = await bareRelayClient();
    clients.push(node);
    if (reserveOn) await listen(`${reserveOn}/p2p-circuit`);
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
