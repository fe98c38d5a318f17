/** What `GET /admin-api/network/status` shows of governance replication (under `replication`). */
import type { GovernanceReplicator } from './replicator.ts';

export function replicationView(r: GovernanceReplicator): Record<string, unknown> {
  const s = r.stats;
  return {
    followedNamespaces: r.followed().length,
    gossipIn: s.gossipIn,
    gossipOut: s.gossipOut,
    opsReceived: s.opsIngested,
    opsWithoutEffect: s.opsWithoutEffect,
    dropped: { ...s.dropped },
    pulls: { ...s.pulls },
    served: s.served,
    waitingOps: r.followed().reduce((n, ns) => n + r.waitingCount(ns), 0),
  };
}
