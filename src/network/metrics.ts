/**
 * Prometheus series for a `Network` (issue #12 §4, §6), read from `status()` at scrape time on the
 * node's `Metrics` (`GET /metrics`). Label values come from closed sets only: directions, outcomes
 * (network-port.ts), penalty reasons (`PENALTY_REASONS`), and protocols the node serves (others are
 * `other`).
 */
import type { GaugeSource, Metrics } from '../http/metrics.ts';
import { PENALTY_REASONS, type Network, type NetworkStatus } from './network-port.ts';
import type { RelayGuardStatus } from './relay-guard.ts';

export function registerNetworkMetrics(metrics: Metrics, network: Pick<Network, 'status'>): void {
  for (const source of networkSeries(() => network.status())) metrics.addGauge(source);
}

/** The series, each reading a fresh status (a status is a few counters and the connection list). */
export function networkSeries(status: () => NetworkStatus): GaugeSource[] {
  return [
    {
      name: 'hearth_network_peers',
      help: 'Peers with at least one open connection',
      read: () => [{ value: new Set(status().connections.map((c) => c.peer)).size }],
    },
    {
      name: 'hearth_network_banned_peers',
      help: 'Peers refused for sending garbage, until their ban ends',
      read: () => [{ value: status().banned.length }],
    },
    {
      name: 'hearth_network_gossip_messages_total',
      type: 'counter',
      help: 'Gossip messages: received, received but dropped by a failing handler, published',
      read: () => {
        const g = status().gossip;
        return [
          { labels: { direction: 'in', outcome: 'received' }, value: g.in },
          { labels: { direction: 'in', outcome: 'dropped' }, value: g.dropped },
          { labels: { direction: 'out', outcome: 'published' }, value: g.out },
        ];
      },
    },
    {
      name: 'hearth_network_bytes_total',
      type: 'counter',
      help: 'Bytes carried over peer connections (after encryption setup, muxer framing included)',
      read: () => {
        const b = status().bytes;
        return [
          { labels: { direction: 'in' }, value: b.in },
          { labels: { direction: 'out' }, value: b.out },
        ];
      },
    },
    {
      name: 'hearth_network_payload_bytes_total',
      type: 'counter',
      help: 'Payload bytes by channel (gossip, governance, backfill, sync, other) and direction, framing excluded',
      read: () => (status().payload ?? []).map((p) => ({ labels: { channel: p.channel, direction: p.direction }, value: p.bytes })),
    },
    {
      name: 'hearth_network_requests_total',
      type: 'counter',
      help: 'Stream request/response exchanges by protocol (served ones; others are "other"), direction and outcome',
      read: () => status().requests.byProtocol.map((r) => ({ labels: { protocol: r.protocol, direction: r.direction, outcome: r.outcome }, value: r.count })),
    },
    {
      name: 'hearth_network_penalties_total',
      type: 'counter',
      help: 'Penalties given to peers for hostile or malformed input, by reason',
      read: () => {
        const p = status().penalties;
        return PENALTY_REASONS.map((reason) => ({ labels: { reason }, value: p[reason] ?? 0 }));
      },
    },
    ...relaySeries(() => status().internet?.relayGuard),
  ];
}

/** The relay's own series (relay-guard.ts), present only on a node that serves as a relay. */
function relaySeries(guard: () => RelayGuardStatus | undefined): GaugeSource[] {
  const read = (f: (g: RelayGuardStatus) => { labels?: Record<string, string>; value: number }[]) => () => {
    const g = guard();
    return g ? f(g) : [];
  };
  return [
    {
      name: 'hearth_relay_reservations_total',
      type: 'counter',
      help: 'Relay reservation requests from peers, accepted by the guard or denied past its per-peer and per-address policy; dropped: reservations whose peer disconnected',
      read: read((g) => [
        { labels: { outcome: 'accepted' }, value: g.reservations.accepted },
        { labels: { outcome: 'denied' }, value: g.reservations.denied },
        { labels: { outcome: 'dropped' }, value: g.reservations.dropped },
      ]),
    },
    {
      name: 'hearth_relay_circuits_total',
      type: 'counter',
      help: 'Relayed circuits: opened, denied past the per-peer policy, ended by the data limit, the duration limit or a close',
      read: read((g) => [
        { labels: { outcome: 'opened' }, value: g.circuits.opened },
        { labels: { outcome: 'denied' }, value: g.circuits.denied },
        { labels: { outcome: 'data_limit' }, value: g.ended.data_limit },
        { labels: { outcome: 'duration_limit' }, value: g.ended.duration_limit },
        { labels: { outcome: 'closed' }, value: g.ended.closed },
      ]),
    },
    {
      name: 'hearth_relay_circuits_open',
      help: 'Relayed circuits open through this relay',
      read: read((g) => [{ value: g.circuits.open }]),
    },
    {
      name: 'hearth_relay_bytes_total',
      type: 'counter',
      help: 'Bytes through relay hop streams: in from circuit sources (forwarded on) and out to them',
      read: read((g) => [
        { labels: { direction: 'in' }, value: g.bytes.in },
        { labels: { direction: 'out' }, value: g.bytes.out },
      ]),
    },
  ];
}
