/**
 * The relay service's limits (`[network] relay_server`, `relay_max_reservations`,
 * `relay_data_limit_bytes`): bare libp2p clients (TCP, Noise, yamux, the relay transport) reserve
 * on a hearth relay on 127.0.0.1 by listening on its `/p2p-circuit` address.
 */
import './polyfill.ts';
import type { Libp2p } from '@libp2p/interface';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from './network-port-suite.ts';
import { bareRelayClient } from './relay-client-testkit.ts';
import { TestNodes } from './test-nodes.ts';

describe('a hearth relay', () => {
  const nodes = new TestNodes();
  const clients: Libp2p[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.stop()));
    await nodes.teardown();
  });

  /** a bare client that asks `relay` for a reservation; resolves once its listen settled */
  async function client(relay: string): Promise<{ node: Libp2p; reserved: boolean; error?: string }> {
    const { node, listen } = await bareRelayClient();
    clients.push(node);
    try {
      await listen(`${relay}/p2p-circuit`);
      return { node, reserved: node.getMultiaddrs().some((a) => a.toString().includes('/p2p-circuit')) };
    } catch (err) {
      return { node, reserved: false, error: (err as Error).message };
    }
  }

  it('holds at most relay_max_reservations and counts them in its status', async () => {
    const relay = await nodes.start({ internet: { relayServer: true, relayMaxReservations: 1 } });
    expect(relay.status().internet!.relayServer).toEqual({ reservations: 0, maxReservations: 1 });
    const addr = relay.addresses()[0]!;
    const first = await client(addr);
    expect(first.reserved).toBe(true);
    await eventually(() => relay.status().internet!.relayServer?.reservations === 1, 'the relay to count one reservation');
    const second = await client(addr);
    expect(second.reserved).toBe(false);
    expect(relay.status().internet!.relayServer!.reservations).toBe(1);
  });

  it('a node that is no relay refuses reservations and reports none', async () => {
    const plain = await nodes.start();
    expect(plain.status().internet!.relayServer).toBeUndefined();
    const c = await client(plain.addresses()[0]!);
    expect(c.reserved).toBe(false);
  });
});
