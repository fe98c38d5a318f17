/**
 * A group's upgrade status on this node: `completed` only once the migrator recorded when (so a
 * client never reads `completed` with a null `completedAt` between the last swap and that record).
 */
import { describe, expect, it } from 'vitest';
import type { ContextStore } from '../contexts/index.ts';
import type { GroupState } from '../governance/index.ts';
import { MemoryStore } from '../store/memory.ts';
import { UpgradeProgress } from './progress.ts';
import type { GroupUpgradeRecord } from './types.ts';

const TO = '02'.repeat(32);
const group = { id: 'g1', contexts: { c1: { metadata: null, registeredAt: 1 }, c2: { metadata: null, registeredAt: 1 } } } as unknown as GroupState;
const upgrade = { id: 'u1', fromVersion: '1.0.0', toVersion: '2.0.0', toAppKey: TO, initiatedAt: 1, initiatedBy: 'k' } as unknown as GroupUpgradeRecord;

function progressWith(bundles: Record<string, string>) {
  const records = { getMeta: async (id: string) => (bundles[id] ? { bundleBlobId: bundles[id] } : undefined) } as unknown as ContextStore;
  return new UpgradeProgress(new MemoryStore(), records);
}

describe('UpgradeProgress.status', () => {
  it('counts the swapped contexts while the group is in progress', async () => {
    const p = progressWith({ c1: TO, c2: '01'.repeat(32) });
    expect(await p.status(group, upgrade)).toMatchObject({ status: 'in_progress', localContextsTotal: 2, localContextsSwapped: 1, localContextsFailed: 0, completedAt: null });
  });

  it('stays in progress after the last swap until the completion is recorded, then carries its time', async () => {
    const p = progressWith({ c1: TO, c2: TO });
    expect(await p.status(group, upgrade)).toMatchObject({ status: 'in_progress', localContextsSwapped: 2, completedAt: null });
    await p.markDone('u1', 'g1', 1_700_000_000);
    expect(await p.status(group, upgrade)).toMatchObject({ status: 'completed', localContextsTotal: null, localContextsSwapped: null, completedAt: 1_700_000_000 });
  });

  it('reads an aborted upgrade as aborted with its counters', async () => {
    const p = progressWith({ c1: TO });
    expect(await p.status(group, { ...upgrade, aborted: { at: 2, by: 'k' } })).toMatchObject({ status: 'aborted', localContextsTotal: 1, localContextsSwapped: 1, completedAt: null });
  });
});
