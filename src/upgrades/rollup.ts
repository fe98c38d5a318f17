/**
 * The fleet view of a namespace's migration (admin-wire-b §7.5 MigrationStatus, §10.4
 * `MigrationProgress`): one row per member device, a rollup over the cohort (the namespace's member
 * accounts). This node reports for itself from its own progress; every other device from the
 * migration heartbeat it last gossiped (heartbeats.ts), if one is fresh — without one it is
 * `unknown`, which is the truth as this node sees it and never counts as migrated. An account is
 * migrated when every device that speaks for it is; failed when one failed; in progress when one
 * is; unknown otherwise.
 */
import type { NodeIdentity } from '../identity/identity.ts';
import type { Clock } from '../clock.ts';
import { unixSecs } from '../clock.ts';
import { effectiveMembers, type NamespaceState, speaksFor } from '../governance/index.ts';
import type { UpgradeProgress } from './progress.ts';
import type { GroupUpgradeRecord } from './types.ts';
import type { MemberMigrationRow, MemberMigrationState, MigrationFailureReason } from '../wire/upgrades.ts';

/** A member device's last fresh report (heartbeats.ts), or undefined. */
export type PeerReports = (namespaceId: string, peer: string) => PeerReport | undefined;

/** What a member device reported of its migration (a migration heartbeat's facts). */
export interface PeerReport {
  upgradeId: string;
  schemaVersion: number;
  residueAuto: number;
  /** unix seconds */
  syncedUpToHlc: number;
  /** unix milliseconds, the reporter's clock */
  tsMs: number;
  migrationFailed?: MigrationFailureReason;
}

/** One member device's row (admin-wire-b §7.5): the wire's shape. */
export type MemberRow = MemberMigrationRow;

export interface FleetRollup {
  record?: GroupUpgradeRecord;
  migrated: number;
  inProgress: number;
  unknown: number;
  failed: number;
  total: number;
  allMigrated: boolean;
  members: MemberRow[];
}

/** The namespace's most recent upgrade (by initiation time, then fence). */
export function latestUpgrade(ns: NamespaceState): GroupUpgradeRecord | undefined {
  let best: GroupUpgradeRecord | undefined;
  for (const g of Object.values(ns.groups)) {
    const u = g.upgrade;
    if (u && (!best || u.initiatedAt > best.initiatedAt || (u.initiatedAt === best.initiatedAt && u.fence > best.fence))) best = u;
  }
  return best;
}

/**
 * The signing keys that speak for `account` in the namespace: its member nodes' keys (bound by the
 * credentials their ops carry, `ns.signers`) and its other bound devices, revoked ones left out.
 */
function devicesOf(ns: NamespaceState, account: string): string[] {
  const keys = new Set<string>();
  for (const [key, s] of Object.entries(ns.signers ?? {})) if (s.account === account && speaksFor(ns, key, account)) keys.add(key);
  for (const binding of Object.values(ns.deviceBindings?.[account] ?? {})) if (binding.revokedAt === undefined) keys.add(binding.signingKey);
  return [...keys];
}

/** Where this node stands in the namespace's latest upgrade: its contexts under it, swapped, and the first failure. */
export interface LocalMigration {
  record: GroupUpgradeRecord;
  total: number;
  swapped: number;
  reason?: MigrationFailureReason;
}

export async function localMigration(progress: UpgradeProgress, ns: NamespaceState): Promise<LocalMigration | undefined> {
  const record = latestUpgrade(ns);
  if (!record) return undefined;
  let total = 0;
  let swapped = 0;
  let reason: MigrationFailureReason | undefined;
  for (const g of Object.values(ns.groups)) {
    if (g.upgrade?.id !== record.id) continue;
    const c = await progress.counts(g, g.upgrade);
    total += c.contexts.length;
    swapped += c.swapped.length;
    reason ??= [...c.failed.values()][0]?.reason;
  }
  return { record, total, swapped, ...(reason ? { reason } : {}) };
}

/**
 * A device's state from its report: one about another upgrade (the device has not applied, or not
 * yet reported, this one) is in progress, as the reference counts a member below the target.
 */
export function reportedState(report: PeerReport, record: GroupUpgradeRecord): MemberMigrationState {
  if (report.upgradeId !== record.id) return 'in_progress';
  if (report.migrationFailed) return 'failed';
  return report.residueAuto === 0 && report.schemaVersion >= record.toStateVersion ? 'migrated' : 'in_progress';
}

/** An account's state from its devices' rows. */
function accountState(states: MemberMigrationState[]): MemberMigrationState {
  if (states.includes('failed')) return 'failed';
  if (states.includes('in_progress')) return 'in_progress';
  if (states.length > 0 && states.every((s) => s === 'migrated')) return 'migrated';
  return 'unknown';
}

export async function fleetRollup(d: { identity: NodeIdentity; progress: UpgradeProgress; clock: Clock; reports?: PeerReports }, ns: NamespaceState): Promise<FleetRollup> {
  const local = await localMigration(d.progress, ns);
  const root = ns.groups[ns.id];
  const accounts = root ? effectiveMembers(ns, root) : [];
  if (!local) return { migrated: 0, inProgress: 0, unknown: 0, failed: 0, total: 0, allMigrated: false, members: [] };
  const { record, total, swapped, reason } = local;
  const me = d.identity.accountId;
  const myState: MemberMigrationState = reason ? 'failed' : swapped === total ? 'migrated' : 'in_progress';
  const now = unixSecs(d.clock);
  const members: MemberRow[] = [
    {
      peer: d.identity.publicKey,
      account: me,
      state: myState,
      report: {
        schemaVersion: record.toStateVersion,
        residueAuto: total - swapped,
        residueIdentity: 0,
        syncedUpToHlc: now,
        reportedAt: now,
        authoredRemaining: 0,
        ...(reason ? { migrationFailed: reason } : {}),
      },
    },
  ];
  const byAccount = new Map<string, MemberMigrationState[]>();
  if (accounts.includes(me)) byAccount.set(me, [myState]);
  for (const account of accounts) {
    if (account === me) continue;
    const states: MemberMigrationState[] = [];
    for (const peer of devicesOf(ns, account)) {
      const r = d.reports?.(ns.id, peer);
      if (!r) {
        members.push({ peer, account, state: 'unknown' });
        states.push('unknown');
        continue;
      }
      const state = reportedState(r, record);
      states.push(state);
      const report = { schemaVersion: r.schemaVersion, residueAuto: r.residueAuto, residueIdentity: 0, syncedUpToHlc: r.syncedUpToHlc, reportedAt: Math.floor(r.tsMs / 1000), authoredRemaining: 0 };
      members.push({ peer, account, state, report: r.migrationFailed ? { ...report, migrationFailed: r.migrationFailed } : report });
    }
    byAccount.set(account, states);
  }
  const states = [...byAccount.values()].map(accountState);
  const count = (s: MemberMigrationState) => states.filter((x) => x === s).length;
  return {
    record,
    migrated: count('migrated'),
    inProgress: count('in_progress'),
    unknown: count('unknown'),
    failed: count('failed'),
    total: accounts.length,
    allMigrated: accounts.length > 0 && count('migrated') === accounts.length,
    members,
  };
}
