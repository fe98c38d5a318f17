/**
 * GET /admin-api/network/status maps the network's internet half onto the reference's fields
 * (relays, directUpgrades, autonat) and hearth's `internet`; a standalone node answers the empty
 * shape with reachability `unknown`.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import type { NetworkStatus } from './network-port.ts';
import { networkStatusView, registerNetworkRoutes } from './routes.ts';

const T = Date.UTC(2026, 10, 26, 12, 0, 0);

const status: NetworkStatus = {
  peerKey: 'k',
  peerId: '12D3KooWSelf',
  listenAddresses: ['/ip4/10.0.0.2/tcp/2428'],
  externalAddresses: ['/ip4/10.0.0.2/tcp/2428/p2p/12D3KooWSelf', '/ip4/198.18.0.1/tcp/2428/p2p/12D3KooWRelay/p2p-circuit/p2p/12D3KooWSelf'],
  connections: [],
  topics: [],
  bytes: { in: 1, out: 2 },
  gossip: { in: 0, out: 0, dropped: 0 },
  requests: { in: 0, out: 0, refused: 0, byProtocol: [] },
  penalties: {},
  banned: [],
  internet: {
    relays: [{ peerId: '12D3KooWRelay', reservationStatus: 'accepted', address: '/ip4/198.18.0.1/tcp/2428/p2p/12D3KooWRelay/p2p-circuit', since: T }],
    relayServer: { reservations: 2, maxReservations: 128 },
    directUpgrades: [{ peerId: '12D3KooWPeer', status: 'failed', reason: 'no direct connection within 60 s', connectionId: 'c1', lastAttempt: T + 1_000 }],
    upgradeCounts: { attempts: 1, successes: 0 },
    autonat: { reachability: 'private', lastTestAddr: '/ip4/198.18.0.9/tcp/2428', lastTestResult: 'unreachable', lastTestReason: 'timeout', lastTestObservedAddr: '/ip4/198.18.0.9/tcp/2428', lastTestAt: T + 2_000 },
    dht: { routingTableSize: 3, protocol: '/hearth/kad/1.0.0' },
  },
};

describe('network status: the internet half', () => {
  it('lists reservations, upgrades and the reachability verdict as the reference names them, times in RFC 3339', () => {
    const v = networkStatusView({ status: () => status, peerId: '12D3KooWSelf' });
    expect(v.relays).toEqual([{ peerId: '12D3KooWRelay', reservationStatus: 'accepted', lastStateChange: '2026-11-26T12:00:00.000Z' }]);
    expect(v.directUpgrades).toEqual([{ peerId: '12D3KooWPeer', status: 'failed', reason: 'no direct connection within 60 s', connectionId: 'c1', lastAttempt: '2026-11-26T12:00:01.000Z' }]);
    expect(v.autonat).toEqual({ ...status.internet!.autonat, lastTestAt: '2026-11-26T12:00:02.000Z' });
    expect(v.rendezvous).toEqual([]);
    expect(v.internet).toEqual({ relayServer: { reservations: 2, maxReservations: 128 }, upgradeCounts: { attempts: 1, successes: 0 }, dht: { routingTableSize: 3, protocol: '/hearth/kad/1.0.0' } });
  });

  it('answers null for a relay it does not serve and a DHT that is off, and a null test time before any test', () => {
    const bare = { ...status, internet: { ...status.internet!, relayServer: undefined, dht: undefined, autonat: { ...status.internet!.autonat, reachability: 'unknown' as const, lastTestAt: null } } };
    const v = networkStatusView({ status: () => bare, peerId: 'x' });
    expect(v.internet).toMatchObject({ relayServer: null, dht: null });
    expect((v.autonat as { lastTestAt: unknown }).lastTestAt).toBeNull();
  });

  it('a standalone node: empty lists, reachability unknown, no internet key', () => {
    const v = networkStatusView({ status: () => undefined, peerId: '12D3KooWSelf' });
    expect(v).toMatchObject({ relays: [], rendezvous: [], directUpgrades: [], standalone: true, autonat: { reachability: 'unknown', lastTestResult: null, lastTestAt: null } });
    expect(v).not.toHaveProperty('internet');
  });

  it('the response schema keeps every field through serialization', async () => {
    const app = Fastify();
    app.addSchema({ $id: 'Error', type: 'object', additionalProperties: true });
    registerNetworkRoutes(app, { status: () => status, peerId: '12D3KooWSelf' });
    const res = await app.inject({ method: 'GET', url: '/admin-api/network/status' });
    await app.close();
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.relays).toEqual([{ peerId: '12D3KooWRelay', reservationStatus: 'accepted', lastStateChange: '2026-11-26T12:00:00.000Z' }]);
    expect(body.autonat).toMatchObject({ reachability: 'private', lastTestReason: 'timeout', lastTestObservedAddr: '/ip4/198.18.0.9/tcp/2428' });
    expect(body.directUpgrades[0]).toMatchObject({ status: 'failed', lastAttempt: '2026-11-26T12:00:01.000Z' });
    expect(body.internet.dht.routingTableSize).toBe(3);
  });
});
