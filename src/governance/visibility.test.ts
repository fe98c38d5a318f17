/**
 * An answered governance write is durable and visible to the very next read (the house rule;
 * docs/governance.md "Acknowledged joins"), also while replication folds a batch of concurrent ops
 * from a peer on the same namespace (a re-fold from genesis) and the store is slow: member add,
 * role, removal, subgroup creation, invitation revocation and metadata are each read back with no
 * wait after their answer, are still there once the peer's batch is folded, and after a restart.
 */
import { describe, expect, it } from 'vitest';
import type { BatchOp } from '../store/store.ts';
import { pair, pull, stateText, TEST_APP, type GovNode } from './testkit.ts';

/** Every batch written to `n`'s store waits `ms` first (a loaded disk). */
function slowStore(n: GovNode, ms: number): void {
  const batch = n.store.batch.bind(n.store);
  n.store.batch = async (ops: BatchOp[]) => {
    await new Promise((r) => setTimeout(r, ms));
    return batch(ops);
  };
}

describe('an answered governance write is visible to the next read', () => {
  it('while a peer’s concurrent ops are folded, on a slow store, and after a restart', async () => {
    const { a, b, nsId } = await pair();
    // B writes ops concurrent with A's below (B has not seen them): folding them on A re-folds from genesis
    for (let i = 0; i < 20; i++) await b.settings.setMetadata(nsId, { target: 'member', account: b.identity.accountId }, { name: `b${i}`, data: {} });
    const { invitation } = await a.invitations.invite(nsId, {});
    slowStore(a, 5);
    const folding = pull(b, a, nsId); // not awaited: A's writes queue behind it, or it behind them

    const newcomer = 'c1'.repeat(32);
    await a.members.addMembers(nsId, [{ identity: newcomer, role: 'Member' }]);
    expect(a.members.members(nsId).map((m) => m.identity)).toContain(newcomer);
    await a.members.setRole(nsId, newcomer, 'Admin');
    expect(a.members.members(nsId).find((m) => m.identity === newcomer)?.role).toBe('Admin');
    const sub = await a.groups.create({ applicationId: TEST_APP, parentGroupId: nsId, name: 'sub', visibility: 'open' });
    expect(a.members.subgroups(nsId).map((g) => g.groupId)).toContain(sub);
    const { invitationId } = await a.invitations.revoke(nsId, { invitation: JSON.parse(JSON.stringify(invitation)) });
    expect(a.governance.locate(nsId)!.group.revokedInvitations?.[invitationId]).toBeDefined();
    await a.settings.setMetadata(nsId, { target: 'group' }, { name: 'root', data: { k: 'v' } });
    expect(a.governance.locate(nsId)!.group.metadata?.name).toBe('root');
    await a.members.removeMembers(nsId, [newcomer]);
    expect(a.members.members(nsId).map((m) => m.identity)).not.toContain(newcomer);

    const folded = await folding;
    expect(folded.added).toHaveLength(20);
    const state = a.governance.namespace(nsId)!;
    expect(state.groups[nsId]!.members[b.identity.accountId]!.metadata?.name).toBe('b19');
    expect(state.groups[nsId]!.members[newcomer]).toBeUndefined();
    expect(state.groups[sub]).toBeDefined();
    expect(state.groups[nsId]!.metadata?.name).toBe('root');

    const restarted = await a.restart();
    expect(stateText(restarted, nsId)).toBe(stateText(a, nsId));
    await pull(a, b, nsId);
    expect(stateText(b, nsId)).toBe(stateText(a, nsId));
  });
});
