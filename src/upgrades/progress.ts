/**
 * Node-local migration progress (admin-wire-b §7.3: the counters are "per node"): which of this
 * node's contexts failed to migrate under an upgrade, and when this node finished a group. Kept
 * apart from the replicated governance state, which every node shares.
 *
 * - `upg.failed`  `<upgrade id>/<context id>` → {reason, message, at}
 * - `upg.done`    `<upgrade id>/<group id>`   → {completedAt} (unix seconds)
 */
import type { ContextStore } from '../contexts/index.ts';
import type { GroupState } from '../governance/index.ts';
import type { BatchOp, Space, Store } from '../store/store.ts';
import type { GroupUpgradeRecord } from './types.ts';
import type { GroupUpgradeStatus, MigrationFailureReason } from '../wire/upgrades.ts';

export interface MigrationFailure {
  reason: MigrationFailureReason;
  message: string;
  /** unix seconds */
  at: number;
  /** the target's bundle blob id when it was not installed here: installing it resumes the migration */
  awaitsBundle?: string;
}

export interface LocalCounts {
  /** this node's contexts registered in the group */
  contexts: string[];
  swapped: string[];
  failed: Map<string, MigrationFailure>;
}

export class UpgradeProgress {
  private readonly failures: Space<MigrationFailure>;
  private readonly done: Space<{ completedAt: number }>;

  constructor(
    store: Store,
    private readonly records: ContextStore,
  ) {
    this.failures = store.space<MigrationFailure>('upg.failed');
    this.done = store.space<{ completedAt: number }>('upg.done');
  }

  failureOp(upgradeId: string, contextId: string, f: MigrationFailure): BatchOp {
    return this.failures.putOp(`${upgradeId}/${contextId}`, f);
  }

  clearFailureOp(upgradeId: string, contextId: string): BatchOp {
    return this.failures.delOp(`${upgradeId}/${contextId}`);
  }

  failure(upgradeId: string, contextId: string): Promise<MigrationFailure | undefined> {
    return this.failures.get(`${upgradeId}/${contextId}`);
  }

  markDone(upgradeId: string, groupId: string, completedAt: number): Promise<void> {
    return this.done.put(`${upgradeId}/${groupId}`, { completedAt });
  }

  async completedAt(upgradeId: string, groupId: string): Promise<number | null> {
    return (await this.done.get(`${upgradeId}/${groupId}`))?.completedAt ?? null;
  }

  /** Where this node's contexts of `group` stand under its upgrade `u`. */
  async counts(group: GroupState, u: GroupUpgradeRecord): Promise<LocalCounts> {
    const out: LocalCounts = { contexts: [], swapped: [], failed: new Map() };
    for (const contextId of Object.keys(group.contexts).sort()) {
      const meta = await this.records.getMeta(contextId);
      if (!meta) continue;
      out.contexts.push(contextId);
      if (meta.bundleBlobId === u.toAppKey) out.swapped.push(contextId);
      else {
        const f = await this.failure(u.id, contextId);
        if (f) out.failed.set(contextId, f);
      }
    }
    return out;
  }

  /** GroupUpgradeStatus (admin-wire-b §7.3): counters and `completedAt` are null once completed. */
  async status(group: GroupState, u: GroupUpgradeRecord): Promise<GroupUpgradeStatus> {
    const c = await this.counts(group, u);
    const base = { fromVersion: u.fromVersion, toVersion: u.toVersion, initiatedAt: u.initiatedAt, initiatedBy: u.initiatedBy };
    const counters = { localContextsTotal: c.contexts.length, localContextsSwapped: c.swapped.length, localContextsFailed: c.failed.size };
    if (u.aborted) return { ...base, status: 'aborted', ...counters, completedAt: null };
    // Completed once the migrator has recorded it, after the group's last swap: between the two the
    // group still reads in_progress, so a `completed` answer always carries its `completedAt`.
    const at = c.swapped.length === c.contexts.length ? await this.completedAt(u.id, group.id) : null;
    if (at !== null) return { ...base, status: 'completed', localContextsTotal: null, localContextsSwapped: null, localContextsFailed: null, completedAt: at };
    return { ...base, status: 'in_progress', ...counters, completedAt: null };
  }
}
