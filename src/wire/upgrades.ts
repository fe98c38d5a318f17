/**
 * Group upgrade and migration status shapes (admin-wire-b §7.3, §7.5). Imports nothing: see
 * ./index.ts.
 */

/** Local status of a group's upgrade (admin-wire-b §7.3). `aborted` is hearth's fourth state. */
export type UpgradeState = 'in_progress' | 'completed' | 'aborted';

/** GroupUpgradeStatus (admin-wire-b §7.3): counters and `completedAt` are null once completed. */
export interface GroupUpgradeStatus {
  fromVersion: string;
  toVersion: string;
  /** unix seconds */
  initiatedAt: number;
  initiatedBy: string;
  status: UpgradeState;
  localContextsTotal: number | null;
  localContextsSwapped: number | null;
  localContextsFailed: number | null;
  /** unix seconds this node finished, or null */
  completedAt: number | null;
}

/** Why a context did not migrate (admin-wire-b §7.5 `migrationFailed`). */
export type MigrationFailureReason = 'check_aborted' | 'apply_failed' | 'no_migration_path';

export type MemberMigrationState = 'migrated' | 'in_progress' | 'unknown' | 'failed';

/** One member device's row of MigrationStatus (admin-wire-b §7.5). */
export interface MemberMigrationRow {
  peer: string;
  account: string;
  state: MemberMigrationState;
  report?: {
    schemaVersion: number;
    residueAuto: number;
    residueIdentity: number;
    syncedUpToHlc: number;
    reportedAt: number;
    authoredRemaining: number;
    migrationFailed?: MigrationFailureReason;
  };
}
