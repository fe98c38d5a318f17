/**
 * `GET /admin-api/network/status` (admin spec "Node": JSON value, not shown; domain.md §1.7 and
 * admin-wire-a §2 give the reference's flat `NetworkStatusResponse`). hearth answers the reference's
 * fields — relay reservations, direct upgrades (DCUtR) and AutoNAT reachability from the network
 * (issue #24); rendezvous stays empty (no maintained JS implementation; the DHT covers discovery) —
 * and adds connections, topics, traffic, requests, penalties and bans, governance replication
 * counters, and `internet` (relay served, upgrade counts, DHT table) (docs/network.md).
 * Timestamps are RFC 3339 UTC. A standalone node answers with no addresses and no connections.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Errors } from '../http/response-schemas.ts';
import type { NetworkStatus } from './network-port.ts';

export interface NetworkRoutesDeps {
  /** the network's status; undefined on a standalone node */
  status: () => NetworkStatus | undefined;
  /** this node's libp2p peer id (derived from its key even when standalone) */
  peerId: string;
  /** extra figures (governance replication), merged under `replication` */
  replication?: () => Record<string, unknown>;
}

const iso = (ms: number): string => new Date(ms).toISOString();

export function networkStatusView(d: NetworkRoutesDeps): Record<string, unknown> {
  const s = d.status();
  const net = s?.internet;
  return {
    localPeerId: s?.peerId ?? d.peerId,
    listenAddrs: s?.listenAddresses ?? [],
    externalAddrs: s?.externalAddresses ?? [],
    relays: (net?.relays ?? []).map((r) => ({ peerId: r.peerId, reservationStatus: r.reservationStatus, lastStateChange: iso(r.since) })),
    rendezvous: [], // no maintained JS rendezvous implementation: the DHT covers discovery (docs/network.md)
    directUpgrades: (net?.directUpgrades ?? []).map((u) => ({ ...u, lastAttempt: iso(u.lastAttempt) })),
    autonat: net ? { ...net.autonat, lastTestAt: net.autonat.lastTestAt === null ? null : iso(net.autonat.lastTestAt) } : UNKNOWN_AUTONAT,
    standalone: s === undefined,
    connections: (s?.connections ?? []).map((c) => ({ peerId: c.peerId, peerKey: c.peer, remoteAddr: c.remoteAddress, direction: c.direction, openedAt: iso(c.openedAt) })),
    topics: s?.topics ?? [],
    bytes: s?.bytes ?? { in: 0, out: 0 },
    ...(s?.payload ? { payload: s.payload } : {}),
    gossip: s?.gossip ?? { in: 0, out: 0, dropped: 0 },
    requests: s ? { in: s.requests.in, out: s.requests.out, refused: s.requests.refused } : { in: 0, out: 0, refused: 0 },
    penalties: s?.penalties ?? {},
    banned: (s?.banned ?? []).map((b) => ({ peerKey: b.peer, until: iso(b.until) })),
    ...(d.replication ? { replication: d.replication() } : {}),
    ...(net ? { internet: { relayServer: net.relayServer ?? null, upgradeCounts: net.upgradeCounts, dht: net.dht ?? null } } : {}),
  };
}

const UNKNOWN_AUTONAT = { reachability: 'unknown', lastTestAddr: null, lastTestResult: null, lastTestReason: null, lastTestObservedAddr: null, lastTestAt: null };

const Strings = Type.Array(Type.String());
const NetworkStatusAnswer = Type.Object(
  {
    localPeerId: Type.String({ description: 'libp2p peer id (12D3KooW…), derived from the node signing key' }),
    listenAddrs: Strings,
    externalAddrs: Type.Array(Type.String({ description: 'dialable multiaddrs ending in /p2p/<peer id>' })),
    relays: Type.Array(Type.Unknown()),
    rendezvous: Type.Array(Type.Unknown()),
    directUpgrades: Type.Array(Type.Unknown()),
    autonat: Type.Object({ reachability: Type.String() }, { additionalProperties: true }),
    standalone: Type.Boolean({ description: 'true when the node runs without a network' }),
    connections: Type.Array(
      Type.Object({ peerId: Type.String(), peerKey: Type.String(), remoteAddr: Type.String(), direction: Type.String(), openedAt: Type.String({ description: 'RFC 3339' }) }),
    ),
    topics: Type.Array(
      Type.Object({ topic: Type.String(), peers: Type.Integer({ minimum: 0 }), mesh: Type.Optional(Type.Integer({ minimum: 0, description: 'peers in this node\'s gossipsub mesh for the topic' })) }),
    ),
    payload: Type.Optional(
      Type.Array(Type.Object({ channel: Type.String(), direction: Type.String(), bytes: Type.Integer({ minimum: 0 }) }), { description: 'hearth: payload bytes by channel and direction (docs/network.md)' }),
    ),
    bytes: Type.Object({ in: Type.Integer(), out: Type.Integer() }),
    gossip: Type.Object({ in: Type.Integer(), out: Type.Integer(), dropped: Type.Integer() }),
    requests: Type.Object({ in: Type.Integer(), out: Type.Integer(), refused: Type.Integer() }),
    penalties: Type.Record(Type.String(), Type.Integer()),
    banned: Type.Array(Type.Object({ peerKey: Type.String(), until: Type.String() })),
    replication: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    internet: Type.Optional(
      Type.Object(
        {
          relayServer: Type.Union([Type.Object({ reservations: Type.Integer(), maxReservations: Type.Integer() }), Type.Null()], { description: 'this node as a relay; null when it serves none' }),
          upgradeCounts: Type.Object({ attempts: Type.Integer(), successes: Type.Integer() }, { description: 'DCUtR attempts and successes since start' }),
          dht: Type.Union([Type.Object({ routingTableSize: Type.Integer(), protocol: Type.String() }), Type.Null()], { description: 'the Kademlia DHT; null when off' }),
        },
        { description: 'hearth: relays served, hole punching counts, the DHT (docs/network.md "Across the internet")' },
      ),
    ),
  },
  { description: 'flat, as the reference' },
);

export function registerNetworkRoutes(app: FastifyInstance, deps: NetworkRoutesDeps): void {
  const schema = { summary: 'Peer-to-peer status: addresses, connections, topics, traffic (flat)', response: { 200: NetworkStatusAnswer, ...Errors(401, 403) } };
  app.get('/admin-api/network/status', { schema }, async () => networkStatusView(deps));
}
