/**
 * The fleet rollup as one node sees it: itself from its own progress, every other member from the
 * migration heartbeats its devices sent (or `unknown` without one), one row per signing key that
 * speaks for it — member nodes bound by the credentials their ops carry (`signers`) as well as
 * extra bound devices, revoked ones left out.
 */
import { describe, expect, it } from 'vitest';
import type { NodeIdentity } from '../identity/identity.ts';
import { namespaceIdOf } from '../crypto/ids.ts';
import { emptyNamespace } from '../governance/genesis.ts';
import { opApplier } from '../governance/testkit.ts';
import type { NamespaceState } from '../governance/types.ts';
import type { UpgradeProgress } from './progress.ts';
import { fleetRollup, type PeerReport } from './rollup.ts';
import { registerUpgradeOps } from './ops.ts';
import { UPGRADE_OPS } from './types.ts';

const applyOp = opApplier(registerUpgradeOps);

const A = 'a1'.repeat(32);
const B = 'b2'.repeat(32);
const C = 'c3'.repeat(32);
const KEY_A = 'aa'.repeat(32);
const KEY_B = 'bb'.repeat(32);
const KEY_C = 'cc'.repeat(32);
const KEY_C2 = 'dd'.repeat(32);
const KEY_C3 = 'ee'.repeat(32);
const APP = 'ef'.repeat(32);

function upgraded(): NamespaceState {
  const salt = '11'.repeat(32);
  const id = namespaceIdOf(A, salt);
  const g = { salt, applicationId: APP, appKey: '01'.repeat(32) };
  const at = (account: string) => ({ account, signer: KEY_A });
  let ns = applyOp(emptyNamespace(id, A, g, 1), id, 'namespace.created', g, at(A));
  ns = applyOp(ns, id, 'group.member_added', { members: [{ account: B, role: 'Member' }, { account: C, role: 'Member' }] }, at(A));
  ns.groups[id].contexts['77'.repeat(32)] = { metadata: null, registeredAt: 1 };
  const body = { groupIds: [id], targetApplicationId: APP, fromVersion: '1.0.0', toVersion: '2.0.0', fromAppKey: '01'.repeat(32), toAppKey: '02'.repeat(32), toStateVersion: 2, cascade: false };
  ns = applyOp(ns, id, UPGRADE_OPS.set, body, at(A));
  // B's node key is known from the credential its join op carried; C has its node key and two devices, one revoked
  ns.signers = { [KEY_A]: { account: A, deviceId: 'a' }, [KEY_B]: { account: B, deviceId: 'b' }, [KEY_C]: { account: C, deviceId: 'c' } };
  ns.deviceBindings = { [C]: { c2: { signingKey: KEY_C2, linkedAt: 1 }, c3: { signingKey: KEY_C3, linkedAt: 1, revokedAt: 2 } } };
  return ns;
}

describe('fleetRollup', () => {
  it('lists every other member node as unknown, one row per key that speaks for it', async () => {
    const ns = upgraded();
    const progress = { counts: async () => ({ contexts: ['c'], swapped: ['c'], failed: new Map() }) } as unknown as UpgradeProgress;
    const identity = { accountId: A, publicKey: KEY_A } as NodeIdentity;
    const r = await fleetRollup({ identity, progress, clock: { now: () => 5_000 } }, ns);
    expect(r).toMatchObject({ migrated: 1, inProgress: 0, failed: 0, unknown: 2, total: 3, allMigrated: false });
    expect(r.members.map((m) => [m.account, m.peer, m.state]).sort()).toEqual(
      [
        [A, KEY_A, 'migrated'],
        [B, KEY_B, 'unknown'],
        [C, KEY_C, 'unknown'],
        [C, KEY_C2, 'unknown'],
      ].sort(),
    );
    expect(r.members.find((m) => m.account === B)).not.toHaveProperty('report'); // no report travelled
  });
});

describe('fleetRollup with the other members\' reports', () => {
  const progress = { counts: async () => ({ contexts: ['c'], swapped: ['c'], failed: new Map() }) } as unknown as UpgradeProgress;
  const identity = { accountId: A, publicKey: KEY_A } as NodeIdentity;
  const clock = { now: () => 5_000_000 };

  it('counts an account migrated only when every device that speaks for it reported so', async () => {
    const ns = upgraded();
    const upgradeId = ns.groups[ns.id]!.upgrade!.id;
    const done: PeerReport = { upgradeId, schemaVersion: 2, residueAuto: 0, syncedUpToHlc: 4_000, tsMs: 4_000_000 };
    const reports = new Map<string, PeerReport>([
      [KEY_B, done],
      [KEY_C, done],
    ]);
    const r = await fleetRollup({ identity, progress, clock, reports: (nsId, peer) => (nsId === ns.id ? reports.get(peer) : undefined) }, ns);
    // C's second device has not reported: C is unknown, and the cohort is not migrated
    expect(r).toMatchObject({ migrated: 2, unknown: 1, total: 3, allMigrated: false });
    expect(r.members.find((m) => m.peer === KEY_B)).toMatchObject({ state: 'migrated', report: { schemaVersion: 2, residueAuto: 0, residueIdentity: 0, syncedUpToHlc: 4_000, reportedAt: 4_000, authoredRemaining: 0 } });
    reports.set(KEY_C2, done);
    const all = await fleetRollup({ identity, progress, clock, reports: (_, peer) => reports.get(peer) }, ns);
    expect(all).toMatchObject({ migrated: 3, unknown: 0, inProgress: 0, failed: 0, total: 3, allMigrated: true });
  });

  it('reads a failure, residue, and a report about another upgrade as the reference does', async () => {
    const ns = upgraded();
    const upgradeId = ns.groups[ns.id]!.upgrade!.id;
    const reports = new Map<string, PeerReport>([
      [KEY_B, { upgradeId: 'ab'.repeat(32), schemaVersion: 2, residueAuto: 0, syncedUpToHlc: 1, tsMs: 1 }],
      [KEY_C, { upgradeId, schemaVersion: 2, residueAuto: 1, syncedUpToHlc: 1, tsMs: 1, migrationFailed: 'no_migration_path' }],
      [KEY_C2, { upgradeId, schemaVersion: 2, residueAuto: 1, syncedUpToHlc: 1, tsMs: 1 }],
    ]);
    const r = await fleetRollup({ identity, progress, clock, reports: (_, peer) => reports.get(peer) }, ns);
    expect(r).toMatchObject({ migrated: 1, inProgress: 1, failed: 1, unknown: 0, allMigrated: false });
    expect(r.members.find((m) => m.peer === KEY_C)).toMatchObject({ state: 'failed', report: { migrationFailed: 'no_migration_path' } });
    expect(r.members.find((m) => m.peer === KEY_C2)!.state).toBe('in_progress');
  });
});
