/**
 * What the governance log records about a group upgrade (domain.md §4.6; admin-wire-b §7), and the
 * wire shapes of its status. The record is replicated (every node applies the same op); migration
 * progress is node-local (src/upgrades/progress.ts), as the reference's counters are "per node".
 */

/** `GroupState.upgrade`: the group's latest upgrade. */
export interface GroupUpgradeRecord {
  /** the id of the op that started it */
  id: string;
  /** the group the upgrade was asked on (itself, or the ancestor a cascade started from) */
  requestedOn: string;
  cascade: boolean;
  targetApplicationId: string;
  fromVersion: string;
  toVersion: string;
  /** bundle blob id the group pinned before (64 zeros when it pinned none) */
  fromAppKey: string;
  /** bundle blob id of the target version */
  toAppKey: string;
  /** the target ABI's `state_version` (0 without one) */
  toStateVersion: number;
  /** unix seconds, from the op */
  initiatedAt: number;
  /** the signing key of the node that published it */
  initiatedBy: string;
  /** an opaque fence naming the op's position in the namespace log (cascade-status `cascadeHlc`) */
  fence: string;
  /** set by `migration/abort`: the group's target went back to `fromAppKey` */
  aborted?: { at: number; by: string };
}

declare module '../governance/types.ts' {
  interface GroupExtensions {
    /** the group's latest upgrade (src/upgrades); absent before the first */
    upgrade?: GroupUpgradeRecord;
  }
}

/** The op kinds of this domain (registered in ops.ts). */
export const UPGRADE_OPS = {
  set: 'group.upgrade.set',
  aborted: 'group.upgrade.aborted',
} as const;

/** Internal bus kinds (not stream frames: events/frames.ts sends only the four migration kinds). */
export const UPGRADE_APPLIED = 'UpgradeApplied';
export const UPGRADE_ABORTED = 'UpgradeAborted';

export const UNRESOLVED_APP_KEY = '0'.repeat(64);
