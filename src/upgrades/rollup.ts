/**
 * The fleet view of a namespace's migration (admin-wire-b §7.5 MigrationStatus, §10.4
 * `MigrationProgress`): one row per member device that reported, a rollup over the cohort (the
 * namespace's members). This node reports for itself from its own progress; other members report
 * over the network once replication carries their heartbeats — until then they are `unknown`, which
 * is the truth as this node sees it.
 */
import type { NodeIdentity } from '../identity/identity.ts';
import type { Clock } from '../clock.ts';
import { unixSecs } from '../clock.ts';
import type { NamespaceState } from '../governance/types.ts';
import { speaksFor } from '../governance/signers.ts';
import { effectiveMembers } from '../governance/views.ts';
import type { UpgradeProgress } from './progress.ts';
import type { GroupUpgradeRecord } from './types.ts';
import type { MemberMigrationRow, MemberMigrationState, MigrationFailureReason } from '../wire/upgrades.ts';

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

export async function fleetRollup(d: { identity: NodeIdentity; progress: UpgradeProgress; clock: Clock }, ns: NamespaceState): Promise<FleetRollup> {
  const record = latestUpgrade(ns);
  const root = ns.groups[ns.id];
  const accounts = root ? effectiveMembers(ns, root) : [];
  if (!record) return { migrated: 0, inProgress: 0, unknown: 0, failed: 0, total: 0, allMigrated: false, members: [] };

  let total = 0;
  let swapped = 0;
  let reason: MigrationFailureReason | undefined;
  for (const g of Object.values(ns.groups)) {
    if (g.upgrade?.id !== record.id) continue;
    const c = await d.progress.counts(g, g.upgrade);
    total += c.contexts.length;
    swapped += c.swapped.length;
    reason ??= [...c.failed.values()][0]?.reason;
  }
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
  for (const account of accounts) {
    if (account === me) continue;
    for (const peer of devicesOf(ns, account)) members.push({ peer, account, state: 'unknown' });
  }
  const mine = accounts.includes(me) ? 1 : 0;
  const unknown = accounts.length - mine;
  const count = (s: MemberMigrationState) => (mine && myState === s ? 1 : 0);
  return {
    record,
    migrated: count('migrated'),
    inProgress: count('in_progress'),
    unknown,
    failed: count('failed'),
    total: accounts.length,
    allMigrated: unknown === 0 && count('migrated') === accounts.length && accounts.length > 0,
    members,
  };
}
