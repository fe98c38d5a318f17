/**
 * Prometheus series of governance replication (issue #12 §4): ops stored from peers and those the
 * fold left without effect, input dropped by penalty reason, pulls by outcome. Read from the
 * replicator's counters at scrape time; labels from closed sets.
 */
import type { GaugeSource } from '../../http/metrics.ts';
import type { ReplicationStats } from './replicator.ts';

export function replicationSeries(stats: ReplicationStats): GaugeSource[] {
  return [
    {
      name: 'hearth_governance_ops_received_total',
      type: 'counter',
      help: 'Governance ops stored from peers, by outcome (applied, or kept without effect by the fold)',
      read: () => [
        { labels: { outcome: 'applied' }, value: stats.opsIngested - stats.opsWithoutEffect },
        { labels: { outcome: 'without_effect' }, value: stats.opsWithoutEffect },
      ],
    },
    {
      name: 'hearth_governance_dropped_total',
      type: 'counter',
      help: 'Governance input from peers dropped before it was stored, by reason',
      read: () => Object.entries(stats.dropped).map(([reason, value]) => ({ labels: { reason }, value })),
    },
    {
      name: 'hearth_governance_pulls_total',
      type: 'counter',
      help: 'Governance pulls (backfill exchanges) from peers, by outcome',
      read: () => [
        { labels: { outcome: 'ok' }, value: stats.pulls.ok },
        { labels: { outcome: 'failed' }, value: stats.pulls.failed },
      ],
    },
  ];
}
