/**
 * `GET /admin-api/network/status` (admin spec "Node": JSON value, not shown; domain.md §1.7 and
 * admin-wire-a §2 give the reference's flat `NetworkStatusResponse`). hearth answers the reference's
 * fields — relays, rendezvous, direct upgrades and AutoNAT are not part of hearth's stack, so those
 * lists are empty and reachability is `unknown` — and adds what it does know: connections, topics,
 * traffic, requests, penalties and bans, and governance replication counters (docs/network.md).
 * Timestamps are RFC 3339 UTC. A standalone node answers with no addresses and no connections.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Errors } from '../http/response-schemas.ts';
import type { NetworkStatus } from './contract.ts';

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
  return {
    localPeerId: s?.peerId ?? d.peerId,
    listenAddrs: s?.listenAddresses ?? [],
    externalAddrs: s?.externalAddresses ?? [],
    relays: [],
    rendezvous: [],
    directUpgrades: [],
    autonat: { reachability: 'unknown', lastTestAddr: null, lastTestResult: null, lastTestReason: null, lastTestObservedAddr: null, lastTestAt: null },
    standalone: s === undefined,
    connections: (s?.connections ?? []).map((c) => ({ peerId: c.peerId, peerKey: c.peer, remoteAddr: c.remoteAddress, direction: c.direction, openedAt: iso(c.openedAt) })),
    topics: s?.topics ?? [],
    bytes: s?.bytes ?? { in: 0, out: 0 },
    gossip: s?.gossip ?? { in: 0, out: 0, dropped: 0 },
    requests: s ? { in: s.requests.in, out: s.requests.out, refused: s.requests.refused } : { in: 0, out: 0, refused: 0 },
    penalties: s?.penalties ?? {},
    banned: (s?.banned ?? []).map((b) => ({ peerKey: b.peer, until: iso(b.until) })),
    ...(d.replication ? { replication: d.replication() } : {}),
  };
}

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
    topics: Type.Array(Type.Object({ topic: Type.String(), peers: Type.Integer({ minimum: 0 }) })),
    bytes: Type.Object({ in: Type.Integer(), out: Type.Integer() }),
    gossip: Type.Object({ in: Type.Integer(), out: Type.Integer(), dropped: Type.Integer() }),
    requests: Type.Object({ in: Type.Integer(), out: Type.Integer(), refused: Type.Integer() }),
    penalties: Type.Record(Type.String(), Type.Integer()),
    banned: Type.Array(Type.Object({ peerKey: Type.String(), until: Type.String() })),
    replication: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { description: 'flat, as the reference' },
);

export function registerNetworkRoutes(app: FastifyInstance, deps: NetworkRoutesDeps): void {
  const schema = { summary: 'Peer-to-peer status: addresses, connections, topics, traffic (flat)', response: { 200: NetworkStatusAnswer, ...Errors(401, 403) } };
  app.get('/admin-api/network/status', { schema }, async () => networkStatusView(deps));
}
