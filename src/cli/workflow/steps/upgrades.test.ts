import { describe, expect, it } from 'vitest';
import type { CascadeStatusEntry, MigrationStatus } from '../../../client/index.ts';
import { cascadeSummary, migrationSummary } from './upgrades.ts';

const entry = (groupId: string, status: string): CascadeStatusEntry =>
  ({ groupId, upgrade: { fromVersion: '1.0.0', toVersion: '2.0.0', initiatedAt: 1, initiatedBy: 'a', status, localContextsTotal: null, localContextsSwapped: null, localContextsFailed: null, completedAt: null } }) as CascadeStatusEntry;

describe('cascadeSummary (merobox _summarize_cascade_status)', () => {
  it('counts completed, failed and pending groups and keeps the entries', () => {
    const groups = [entry('a', 'completed'), entry('b', 'in_progress'), entry('c', 'aborted')];
    expect(cascadeSummary(groups)).toEqual({ total: 3, completed: 1, failed: 1, pending: 1, all_completed: false, groups });
  });
  it('is complete only when every group completed, and never when there is none', () => {
    expect(cascadeSummary([entry('a', 'completed'), entry('b', 'completed')]).all_completed).toBe(true);
    expect(cascadeSummary([]).all_completed).toBe(false);
  });
});

describe('migrationSummary (merobox _summarize_migration_status)', () => {
  const status = (allMigrated: boolean, failed: number, states: string[]): MigrationStatus => ({
    targetVersion: 2,
    expectedMembers: states.length,
    rollup: { migrated: states.filter((s) => s === 'migrated').length, inProgress: 0, unknown: states.filter((s) => s === 'unknown').length, failed, total: states.length, allMigrated, membersPendingSignature: 0 },
    members: states.map((state, i) => ({ peer: `p${i}`, account: `a${i}`, state: state as 'migrated', ...(state === 'failed' ? { report: { migrationFailed: 'apply_failed' } } : {}) })) as MigrationStatus['members'],
  });
  it('lifts the roll-up to the top level with one compact row per member', () => {
    expect(migrationSummary(status(false, 0, ['migrated', 'unknown']))).toEqual({
      target_version: 2,
      expected_members: 2,
      total: 2,
      migrated: 1,
      in_progress: 0,
      unknown: 1,
      failed: 0,
      all_migrated: false,
      members_pending_signature: 0,
      members: [
        { peer: 'p0', state: 'migrated', migration_failed: null },
        { peer: 'p1', state: 'unknown', migration_failed: null },
      ],
    });
  });
  it('counts a failed member the roll-up missed, and is then never all migrated', () => {
    const s = migrationSummary(status(true, 0, ['migrated', 'failed']));
    expect(s.failed).toBe(1);
    expect(s.all_migrated).toBe(false);
    expect(s.members[1]!.migration_failed).toBe('apply_failed');
  });
});
