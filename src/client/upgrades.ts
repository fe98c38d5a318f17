/**
 * @module client/upgrades
 *
 * Group upgrades and migration (admin spec "Sync, upgrades and migration"; admin-wire-b §7).
 * `upgrade` returns at once with this node's counters; progress is `status` (poll it, or watch the
 * namespace's `Migration*` group frames on the event stream). `migrationStatus` and `abort` decode
 * the flat answers the node sends; the others unwrap `{data}`.
 */

import type { CallOptions, HttpClient } from './http.ts';
import type { GroupUpgradeStatus, MemberMigrationRow, MemberMigrationState, UpgradeState } from '../wire/upgrades.ts';

export type { GroupUpgradeStatus, UpgradeState };

export interface UpgradeGroupRequest {
  /** the group's own application (an upgrade changes its version, never the application) */
  targetApplicationId: string;
  /** also every descendant group running the same application */
  cascade?: boolean;
  /** proceed although the target embeds no ABI */
  forceCodeOnly?: boolean;
  /** hearth: the installed version to move to (default: the newest installed) */
  version?: string;
}

export interface UpgradeGroupResult {
  groupId: string;
  status: UpgradeState;
  /** null once completed */
  localContextsTotal: number | null;
  localContextsSwapped: number | null;
  localContextsFailed: number | null;
}


export interface CascadeStatusEntry {
  groupId: string;
  upgrade: GroupUpgradeStatus;
  cascadeHlc?: string;
}

export type { MemberMigrationState };

/** MigrationStatus (admin-wire-b §7.5). */
export interface MigrationStatus {
  targetVersion: number;
  expectedMembers: number;
  cohortPinnedAtHlc?: string;
  fleetCompletedAt?: number;
  rollup: { migrated: number; inProgress: number; unknown: number; failed: number; total: number; allMigrated: boolean; membersPendingSignature: number };
  members: MemberMigrationRow[];
}

const seg = encodeURIComponent;

export class UpgradesApi {
  constructor(private readonly http: HttpClient) {}

  /** `POST /groups/{g}/upgrade`. */
  upgrade(groupId: string, body: UpgradeGroupRequest, options?: CallOptions): Promise<UpgradeGroupResult> {
    return this.http.data(`/admin-api/groups/${seg(groupId)}/upgrade`, { ...options, method: 'POST', body });
  }

  /** `GET /groups/{g}/upgrade/status`: null when the group was never upgraded. */
  status(groupId: string, options?: CallOptions): Promise<GroupUpgradeStatus | null> {
    return this.http.data(`/admin-api/groups/${seg(groupId)}/upgrade/status`, { ...options, nullable: true });
  }

  /** `POST /groups/{g}/upgrade/retry`: this node's failed contexts migrate again. */
  retry(groupId: string, options?: CallOptions): Promise<UpgradeGroupResult> {
    return this.http.data(`/admin-api/groups/${seg(groupId)}/upgrade/retry`, { ...options, method: 'POST', body: {} });
  }

  /** `GET /groups/{ns}/migration-status` (flat). */
  migrationStatus(namespaceId: string, options?: CallOptions): Promise<MigrationStatus> {
    return this.http.json(`/admin-api/groups/${seg(namespaceId)}/migration-status`, options);
  }

  /** `GET /groups/{ns}/cascade-status`. */
  cascadeStatus(namespaceId: string, options?: CallOptions): Promise<CascadeStatusEntry[]> {
    return this.http.data(`/admin-api/groups/${seg(namespaceId)}/cascade-status`, options);
  }

  /** `POST /groups/{ns}/migration/abort` (flat): `aborted: false` when nothing was pending. */
  abort(namespaceId: string, options?: CallOptions): Promise<{ namespaceId: string; aborted: boolean }> {
    return this.http.json(`/admin-api/groups/${seg(namespaceId)}/migration/abort`, { ...options, method: 'POST' });
  }
}
